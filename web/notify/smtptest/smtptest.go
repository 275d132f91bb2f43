// Package smtptest runs a real SMTP server (emersion/go-smtp) on 127.0.0.1 for tests, and
// decodes what it receives: recipients, subject, and the text and HTML parts.
package smtptest

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From      string
	To        []string
	Raw       []byte
	Subject   string
	MessageID string
	Text      string
	HTML      string
}

// Server is a running SMTP server.
type Server struct {
	Addr string
	srv  *smtp.Server
	mu   sync.Mutex
	msgs []Message
	done chan struct{}
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves until Close or the end
// of the test.
func Start(t testing.TB, addr string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("smtptest: listen %s: %v", addr, err)
	}
	s := &Server{Addr: ln.Addr().String(), done: make(chan struct{})}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.AllowInsecureAuth = true
	s.srv.ErrorLog = nopLogger{}
	go func() { s.srv.Serve(ln); close(s.done) }()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server; it may be called twice.
func (s *Server) Close() {
	s.srv.Close()
	<-s.done
}

// Messages are the accepted messages, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func (x *session) Reset()                                      { x.from, x.to = "", nil }
func (x *session) Logout() error                               { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error { x.from = from; return nil }
func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error   { x.to = append(x.to, to); return nil }
func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Parse(raw)
	m.From, m.To = x.from, append([]string(nil), x.to...)
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, m)
	x.s.mu.Unlock()
	return nil
}

// Parse decodes a raw message: subject (RFC 2047), Message-ID, text and HTML parts.
func Parse(raw []byte) Message {
	m := Message{Raw: raw}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return m
	}
	dec := new(mime.WordDecoder)
	m.Subject, _ = dec.DecodeHeader(msg.Header.Get("Subject"))
	m.MessageID = msg.Header.Get("Message-Id")
	walk(&m, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return m
}

func walk(m *Message, contentType, encoding string, body io.Reader) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = "text/plain"
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			walk(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
		}
	}
	switch strings.ToLower(encoding) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	b, _ := io.ReadAll(body)
	switch mt {
	case "text/plain":
		m.Text = string(b)
	case "text/html":
		m.HTML = string(b)
	}
}
