// Package static holds the files the card form links (its stylesheet and the little
// JavaScript that formats inputs, counts down and talks to the embedding page), the
// dashboard's stylesheet and its one script (dashcopy.js, a payout link's Copy button), the README's example merchant logo (logo-demo.svg) and the vendored API reference renderer (Redoc, with its licence).
// They are embedded in the binary and served under /static/ with a content hash in their links.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed card.css card.js dashboard.css dashcopy.js logo-demo.svg redoc/redoc.standalone.js redoc/redoc.standalone.js.LICENSE.txt redoc/LICENSE
var files embed.FS

// versions maps a file name to the first hex digits of its SHA-256, for cache busting.
var versions = func() map[string]string {
	v := map[string]string{}
	fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		v[path] = hex.EncodeToString(sum[:6])
		return nil
	})
	return v
}()

// Path is the link of a static file: /static/name?v=hash.
func Path(name string) string {
	return "/static/" + name + "?v=" + versions[name]
}

// Handler serves the files under /static/. A link carries the content hash, so a file may
// be cached for a long time; a request for another version is still answered (the current
// file), only not cached.
func Handler() http.Handler {
	fsrv := http.StripPrefix("/static/", http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if _, ok := versions[name]; !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("v") == versions[name] {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		fsrv.ServeHTTP(w, r)
	})
}
