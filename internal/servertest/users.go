package servertest

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// The dashboard's named users: the set-up link (a password and TOTP enrolled), the sign-in
// with a code of a 30-second step, as a browser without JavaScript goes through them.

// User is a dashboard user as a test knows it: its secret once it is set up.
type User struct {
	ID, Email, Password, Secret string
}

// CodeAt is the TOTP code of a secret for the 30-second step n.
func CodeAt(t testing.TB, secret string, step int64) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, time.Unix(step*30, 0), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// StepStartClock is a Clock at the start of the next 30-second step of the sign-in codes:
// a test that uses the codes of a few steps in turn has a whole step before it, instead of
// sleeping until a new one starts.
func StepStartClock() *Clock {
	c := &Clock{}
	c.Advance(30*time.Second - time.Duration(time.Now().UnixNano()%int64(30*time.Second)))
	return c
}

// GetPage GETs u with c: the status, the body and the redirect.
func GetPage(t testing.TB, c *http.Client, u string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// PostValues posts form to u with c: the status, the body and the redirect.
func PostValues(t testing.TB, c *http.Client, u string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// SecretOnPage finds the TOTP secret on a user's set-up page.
var SecretOnPage = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// SetUpUser follows a user's set-up link on the server at base with c (a browser that
// keeps no cookie): the page shows a QR code and the secret, which it keeps on a reload; a
// short password and a wrong code are refused; a password and the code of step confirm it,
// and the link is used up.
func SetUpUser(t testing.TB, c *http.Client, base, link string, u *User, step int64) {
	t.Helper()
	lu, err := url.Parse(link)
	if err != nil || lu.Path != "/dashboard/setup" || lu.Query().Get("t") == "" {
		t.Fatalf("set-up link %q: want its token in the query, never in the path", link)
	}
	code, body, _ := GetPage(t, c, base+lu.RequestURI())
	m := SecretOnPage.FindStringSubmatch(body)
	if code != 200 || m == nil || !strings.Contains(body, `src="data:image/png;base64,`) || !strings.Contains(body, "otpauth://totp/payouts:") {
		t.Fatalf("set-up page: %d, no secret, QR code or otpauth URI:\n%s", code, body)
	}
	u.Secret = m[1]
	if again := SecretOnPage.FindStringSubmatch(func() string { _, b, _ := GetPage(t, c, base+lu.RequestURI()); return b }()); again == nil || again[1] != u.Secret {
		t.Fatalf("a reload offers another secret: %v", again)
	}
	code, _, _ = PostValues(t, c, base+lu.RequestURI(), url.Values{"password": {"short"}, "password2": {"short"}, "code": {CodeAt(t, u.Secret, step)}})
	if code != http.StatusUnprocessableEntity {
		t.Errorf("a short password: %d, want 422", code)
	}
	code, _, _ = PostValues(t, c, base+lu.RequestURI(), url.Values{"password": {u.Password}, "password2": {u.Password}, "code": {"000000"}})
	if code != http.StatusUnprocessableEntity {
		t.Errorf("a wrong code: %d, want 422", code)
	}
	code, _, loc := PostValues(t, c, base+lu.RequestURI(), url.Values{"password": {u.Password}, "password2": {u.Password}, "code": {CodeAt(t, u.Secret, step)}})
	if code != http.StatusSeeOther || loc != "/dashboard/login" {
		t.Fatalf("set-up: %d to %q", code, loc)
	}
	if code, _, _ := GetPage(t, c, base+lu.RequestURI()); code != http.StatusNotFound {
		t.Errorf("the used link answers %d, want 404", code)
	}
}

// SignInUser signs c (a browser that keeps cookies) in as u with the code of step, on the
// server at base; ok is false, with the status, when refused.
func SignInUser(t testing.TB, c *http.Client, base string, u User, step int64) (ok bool, code int) {
	t.Helper()
	code, _, loc := PostValues(t, c, base+"/dashboard/login", url.Values{"email": {strings.ToUpper(u.Email)}, "password": {u.Password},
		"code": {CodeAt(t, u.Secret, step)}})
	return code == http.StatusSeeOther && loc == "/dashboard", code
}

// SetUpUser follows u's set-up link (SetUpUser).
func (s *Server) SetUpUser(t testing.TB, link string, u *User, step int64) {
	t.Helper()
	SetUpUser(t, s.Browser(), s.URL, link, u, step)
}

// UserSignIn signs u in with the code of step and returns the browser that holds its
// session; nil and the status when refused.
func (s *Server) UserSignIn(t testing.TB, u User, step int64) (*http.Client, int) {
	t.Helper()
	c := s.CookieBrowser()
	if ok, code := SignInUser(t, c, s.URL, u, step); !ok {
		return nil, code
	}
	return c, http.StatusSeeOther
}
