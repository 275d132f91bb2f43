package notify

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"payouts/rules"
	"payouts/templates"
)

// LinkMail is a payout link's email to its beneficiary (a reminder when reminder is set):
// in the link's language, Spanish unless it says en, naming the merchant, the amount and
// when the link expires.
func LinkMail(p *rules.Payout, m *rules.Merchant, link string, reminder bool) (Mail, error) {
	b := p.Request.Beneficiary
	v := templates.MailLink{Lang: "es", URL: link, Merchant: m.Name, Amount: templates.FormatAmount(p.Currency, p.Amount), OrderID: p.OrderID}
	var subject string
	if p.Link != nil && p.Link.Lang == "en" {
		v.Lang = "en"
		v.Title, v.Button = "Enter where to receive your payment", "Enter my account"
		if reminder {
			v.Title = "Reminder: your payment is waiting"
		}
		v.Hello = fmt.Sprintf("Hello %s,", b.Name)
		v.Intro = fmt.Sprintf("%s is sending you %s. To receive it, open the link and enter the account or wallet where you want the money.", v.Merchant, v.Amount)
		v.Until = "The link expires on " + localWhenEn(p.SessionExpiresAt, p.Country) + "; after that the payment is cancelled."
		v.Note = fmt.Sprintf("Nobody from %s will ask you for this link by phone. If you were not expecting this payment, ignore this email.", v.Merchant)
		v.Footer = "This is an automated message; please do not reply to this email."
		v.Labels = [3]string{"Merchant", "Amount", "Order number"}
		subject = fmt.Sprintf("%s is sending you %s: enter where to receive it", v.Merchant, v.Amount)
		if reminder {
			subject = fmt.Sprintf("Reminder: %s from %s is waiting for you", v.Amount, v.Merchant)
		}
	} else {
		v.Title, v.Button = "Indica dónde recibir tu pago", "Ingresar mi cuenta"
		if reminder {
			v.Title = "Recordatorio: tu pago te espera"
		}
		v.Hello = fmt.Sprintf("Hola %s,", b.Name)
		v.Intro = fmt.Sprintf("%s te envía %s. Para recibirlo, abre el enlace e indica la cuenta o billetera donde quieres el dinero.", v.Merchant, v.Amount)
		v.Until = "El enlace vence el " + localWhen(p.SessionExpiresAt, p.Country) + "; después de esa fecha el pago se cancela."
		v.Note = fmt.Sprintf("Nadie de %s te pedirá este enlace por teléfono. Si no esperabas este pago, ignora este correo.", v.Merchant)
		v.Footer = "Este es un mensaje automático; por favor no respondas a este correo."
		v.Labels = [3]string{"Comercio", "Monto", "Número de orden"}
		subject = fmt.Sprintf("%s te envía %s: indica dónde recibirlo", v.Merchant, v.Amount)
		if reminder {
			subject = fmt.Sprintf("Recordatorio: %s de %s te espera", v.Amount, v.Merchant)
		}
	}
	text := fmt.Sprintf("%s\n\n%s\n\n%s\n\n%s\n\n%s: %s\n%s: %s\n%s: %s\n\n%s\n\n%s\n",
		v.Hello, v.Intro, link, v.Until, v.Labels[0], v.Merchant, v.Labels[1], v.Amount, v.Labels[2], v.OrderID, v.Note, v.Footer)
	var html bytes.Buffer
	if err := templates.MailLinkHTML(v).Render(context.Background(), &html); err != nil {
		return Mail{}, err
	}
	return Mail{To: b.Email, Subject: subject, Text: text, HTML: html.String()}, nil
}

func localWhenEn(t time.Time, country string) string {
	place := "Colombia time"
	if country == "PER" {
		place = "Lima time"
	}
	return t.In(utc5).Format("Jan 2, 2006 at 15:04") + " (" + place + ")"
}
