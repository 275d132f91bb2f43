package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payouts/api"
	"payouts/rules"
)

// listenCommand follows a running server's event stream (GET /api/v1/{merchantId}/events/stream,
// Server-Sent Events) and re-delivers each delivery the server makes to a local URL with the
// headers and body of the server's own, so that the app's signature check runs unchanged and
// the delivery chaos reaches it too. It reconnects by itself, resuming after the
// last delivery it forwarded (Last-Event-ID).
//
// The SSE client is the standard library's: each connection must be signed anew (the
// signature's timestamp is good for 5 minutes), which the reconnecting clients of the SSE
// libraries, replaying one fixed request, do not do; the format itself is a few lines.
var listenCommand = &Command{
	Name:     "listen",
	Usage:    "--merchant ID --key K --secret S --forward-to URL [flags]",
	Short:    "forward a merchant's notifications from a sandbox server to a local URL",
	Long:     "Forwards the merchant's notifications from a sandbox server to a local URL, signed as the server signs them.",
	Required: []string{"merchant", "key", "secret", "forward-to"},
	Flags:    listenFlags,
}

func listenFlags(fs *flag.FlagSet) Runner {
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the server")
	merchant := fs.String("merchant", "", "the merchant's id")
	key := fs.String("key", "", "the merchant's API key")
	secret := fs.String("secret", "", "the merchant's API secret")
	forward := fs.String("forward-to", "", "the local URL each event is POSTed to")
	after := fs.String("after", "", "start after this stream cursor (0: every delivery kept); default: the deliveries from now on")
	return func(ctx context.Context, env Env, _ []string) error {
		l := &listener{base: strings.TrimSuffix(*base, "/"), merchant: *merchant, key: *key, secret: *secret, forward: *forward,
			last: *after, out: env.Stdout, client: &http.Client{Timeout: 15 * time.Second}}
		return l.run(ctx)
	}
}

type listener struct {
	base, merchant, key, secret, forward string
	last                                 string // the cursor of the last event forwarded
	out                                  io.Writer
	client                               *http.Client
}

// listenIdle is how long a stream may stay silent (the server writes a comment every 15 s)
// before it is taken for dead and reconnected.
const listenIdle = 40 * time.Second

func (l *listener) run(ctx context.Context) error {
	wait := time.Second
	for {
		connected, err := l.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal fatalListenError
		if errors.As(err, &fatal) {
			return err
		}
		if connected {
			wait = time.Second
		}
		fmt.Fprintf(l.out, "%s  stream lost (%v); reconnecting in %s\n", stamp(), err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Second)
	}
}

// fatalListenError is an answer that no reconnection changes (wrong credentials, sandbox off).
type fatalListenError struct{ error }

// follow connects once and forwards events until the stream ends; connected says whether it
// got as far as the stream.
func (l *listener) follow(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := "/api/v1/" + l.merchant + "/events/stream"
	ts := time.Now().UnixMilli()
	u := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", l.base, path, ts, rules.Signature(l.secret, http.MethodGet, path, ts, nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fatalListenError{err}
	}
	req.Header.Set("monnet-api-key", l.key)
	req.Header.Set("Accept", "text/event-stream")
	if l.last != "" {
		req.Header.Set("Last-Event-ID", l.last)
	}
	resp, err := (&http.Client{}).Do(req) // no timeout: the stream lasts; idleness is watched below
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the signed URL says nothing the reader needs
		}
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		err := fmt.Errorf("the server answered %s: %s", resp.Status, bytes.TrimSpace(raw))
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusBadRequest:
			return false, fatalListenError{err}
		}
		return false, err
	}
	fmt.Fprintf(l.out, "%s  ready: forwarding the events of merchant %s from %s to %s (Ctrl-C stops)\n", stamp(), l.merchant, l.base, l.forward)
	idle := time.AfterFunc(listenIdle, cancel)
	defer idle.Stop()
	r := bufio.NewReader(resp.Body)
	var id, data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil && err != nil {
				return true, errors.New("no data for " + listenIdle.String())
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the stream")
			}
			return true, err
		}
		idle.Reset(listenIdle)
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "": // the end of an event
			if data.Len() > 0 {
				l.deliver(ctx, id.String(), data.String())
			} else if _, err := strconv.ParseInt(id.String(), 10, 64); err == nil {
				l.last = id.String() // the stream's opening: where it starts
			}
			id.Reset()
			data.Reset()
		case field == "": // a comment
		case field == "id":
			id.Reset()
			id.WriteString(value)
		case field == "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
}

// deliver POSTs one streamed event to the local URL and prints one line with its answer.
func (l *listener) deliver(ctx context.Context, id, data string) {
	var ev api.StreamedEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		fmt.Fprintf(l.out, "%s  event %s: unreadable data: %v\n", stamp(), id, err)
		return
	}
	start := time.Now()
	answer := ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forward, strings.NewReader(ev.Body))
	if err == nil {
		for k, v := range ev.Headers {
			req.Header.Set(k, v)
		}
		var resp *http.Response
		if resp, err = l.client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			answer = resp.Status
		}
	}
	if err != nil {
		answer = "error: " + err.Error()
	}
	cause := ""
	if ev.Cause != "" {
		cause = "  [" + ev.Cause + "]"
	}
	fmt.Fprintf(l.out, "%s  %s  %s%s  → %s (%d ms)\n", stamp(), ev.EventID, ev.Type, cause, answer, time.Since(start).Milliseconds())
	if _, perr := strconv.ParseInt(id, 10, 64); perr == nil {
		l.last = id
	}
}

func stamp() string { return time.Now().UTC().Format("15:04:05") }
