package api_test

// Colombia cash payouts: the one-time code mailed to the beneficiary, and its claim.

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

func TestCashOTPMailedWrongCodeRefusedRightCodeSettlesSuccess(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cashPayouts": true, "emailNotifications": true})
		p := c.Create(t, servertest.ColCashRequest("CASH-OTP-1"))
		id := p.Payout.ID

		mails := s.WaitMails(t, "?kind=cash.otp&payoutId="+strconv.FormatInt(id, 10), 1, 10*time.Second)
		otp := mails[0]
		if otp.To != "pedro.ramirez@yahoo.com" || !strings.Contains(otp.Subject, "COP $ 50.000,00") {
			t.Errorf("OTP mail to %q subject %q", otp.To, otp.Subject)
		}
		m := servertest.OTPInText.FindStringSubmatch(otp.Text)
		if m == nil || !strings.Contains(otp.HTML, m[1]) {
			t.Fatalf("no code in the OTP mail:\n%s", otp.Text)
		}
		code := m[1]

		status, raw := c.Claim(t, id, servertest.OtherCode(code))
		if pr := servertest.DecodeProblem(t, raw); status != 401 || pr.Code != rules.CodeClaimCodeWrong {
			t.Fatalf("wrong code: %d %s, want 401 %s", status, raw, rules.CodeClaimCodeWrong)
		}
		if status, raw := c.Claim(t, id, "12ab56"); status != 400 {
			t.Errorf("malformed code: %d %s, want 400", status, raw)
		}
		status, raw = c.Claim(t, id, code)
		if status != 200 {
			t.Fatalf("right code: %d %s", status, raw)
		}
		c.WaitStage(t, id, "SUCCESS", 10*time.Second)
		if status, raw := c.Claim(t, id, code); status != 409 {
			t.Errorf("claim of a settled payout: %d %s, want 409", status, raw)
		}
		outcome := s.WaitMails(t, "?kind=beneficiary.mail&payoutId="+strconv.FormatInt(id, 10), 1, 10*time.Second)
		if !strings.HasPrefix(outcome[0].Subject, "Recibiste COP $ 50.000,00") {
			t.Errorf("outcome mail subject %q", outcome[0].Subject)
		}

		// The code is nowhere but in the mail: not in the logs, not in the payout's answer.
		_, _, got := c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
		alone := regexp.MustCompile(`(^|[^0-9])` + code + `([^0-9]|$)`) // not a part of a longer number
		for where, text := range map[string]string{"the log": s.Log(), "GET payout": string(got)} {
			if alone.MatchString(text) {
				t.Errorf("the one-time code appears in %s", where)
			}
		}
		if strings.Contains(string(got), "claimCodeHash") {
			t.Errorf("the payout answer shows the code's hash")
		}
		// The mailbox is the admin's.
		s.Run(t, []servertest.Scenario{
			{Name: "the mailbox without the admin token", Path: "/sandbox/mail.json", WantStatus: 401},
			{Name: "the mailbox page", Path: "/sandbox/mail", Admin: true, WantStatus: 200, WantContains: []string{"Recibiste COP $ 50.000,00"}},
		})
	})
}

func TestCashClaimLockedAfterFiveWrongCodes(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cashPayouts": true})
		p := c.Create(t, servertest.ColCashRequest("CASH-LOCK"))
		id := p.Payout.ID
		mails := s.WaitMails(t, "?kind=cash.otp&payoutId="+strconv.FormatInt(id, 10), 1, 10*time.Second)
		code := servertest.OTPInText.FindStringSubmatch(mails[0].Text)[1]
		for i := range rules.ClaimMaxAttempts {
			if status, raw := c.Claim(t, id, servertest.OtherCode(code)); status != 401 || servertest.DecodeProblem(t, raw).Code != rules.CodeClaimCodeWrong {
				t.Fatalf("wrong code %d: %d %s", i+1, status, raw)
			}
		}
		status, raw := c.Claim(t, id, code)
		if pr := servertest.DecodeProblem(t, raw); status != 409 || pr.Code != rules.CodeClaimLocked {
			t.Fatalf("right code after five wrong ones: %d %s, want 409 %s", status, raw, rules.CodeClaimLocked)
		}
		_, _, raw = c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
		if got := servertest.DecodePayout(t, raw); got.Output.Stage != "IN_PROGRESS" {
			t.Errorf("a locked claim settled the payout: %+v", got.Output)
		}
	})
}

func TestCashClaimAndMailboxRefusedWhenSandboxIsOff(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		c := s.NewMerchant(t, map[string]any{"cashPayouts": true})
		p := c.Create(t, servertest.ColCashRequest("CASH-NOSANDBOX"))
		status, raw := c.Claim(t, p.Payout.ID, "123456")
		if pr := servertest.DecodeProblem(t, raw); status != 403 || pr.Code != rules.CodeSandboxOff {
			t.Errorf("claim with --sandbox=false: %d %s, want 403 2060", status, raw)
		}
		if code := s.Admin(t, "GET", "/sandbox/mail.json", nil, nil); code != 403 {
			t.Errorf("mailbox with --sandbox=false: %d, want 403", code)
		}
	})
}
