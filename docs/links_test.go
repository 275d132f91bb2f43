package docs_test

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// Every relative link and #anchor of the README and of docs/ resolves: the file is in the
// repository, and the anchor is a heading of the target as GitHub names it. External links
// are not fetched.
func TestLinksResolve(t *testing.T) {
	fsys := os.DirFS("..")
	for _, p := range checkLinks(fsys, markdownFiles(t)) {
		t.Error(p)
	}
}

// The checker itself catches what it is for, over text held in memory.
func TestLinkCheckerCatchesBrokenLinks(t *testing.T) {
	target := "# Guide\n\n## The sandbox rails\n\n## The original's bearer scheme (wire)\n\n" +
		"### 4. `payouts listen`: your app\n\n## Results\n\n## Results\n\n" +
		"## Ten minutes — proven\n\n```sh\n# not a heading\n```\n\n## [Linked](x.md) heading\n"
	tests := []struct {
		name, readme string
		want         string // a part of the one problem expected; empty: none
	}{
		{"a file that exists", "[a](docs/guide.md)", ""},
		{"a file that does not", "[a](docs/missing.md)", "no such file"},
		{"an anchor of a heading", "[a](docs/guide.md#the-sandbox-rails)", ""},
		{"a broken anchor", "[a](docs/guide.md#sandbox-rails)", "no heading"},
		{"punctuation leaves the anchor", "[a](docs/guide.md#the-originals-bearer-scheme-wire)", ""},
		{"code and numbers in a heading", "[a](docs/guide.md#4-payouts-listen-your-app)", ""},
		{"a dash between spaces", "[a](docs/guide.md#ten-minutes--proven)", ""},
		{"a link in a heading keeps its text", "[a](docs/guide.md#linked-heading)", ""},
		{"the first of two headings", "[a](docs/guide.md#results)", ""},
		{"the second of two headings", "[a](docs/guide.md#results-1)", ""},
		{"no third", "[a](docs/guide.md#results-2)", "no heading"},
		{"a heading in a code block is none", "[a](docs/guide.md#not-a-heading)", "no heading"},
		{"an anchor of its own file", "## Local\n\n[a](#local)", ""},
		{"a broken anchor of its own file", "## Local\n\n[a](#elsewhere)", "no heading"},
		{"a link in a code block", "```\n[a](docs/missing.md)\n```", ""},
		{"a link in an indented code block of a list", "1. run\n\n   ```sh\n   [a](docs/missing.md)\n   ```", ""},
		{"a link in a code span", "see `[a](docs/missing.md)`", ""},
		{"external links are not fetched", "[a](https://example.invalid/x) <http://127.0.0.1:8080/docs>", ""},
		{"outside the repository", "[a](../shared/bench/ratio.sh)", "outside the repository"},
		{"an absolute path", "[a](/docs/guide.md)", "absolute"},
		{"an image", "![a](docs/images/a.png)", ""},
		{"an anchor into a picture", "[a](docs/images/a.png#x)", "not Markdown"},
		{"a directory", "[docs](docs/)", ""},
		{"a reference definition", "[a][b]\n\n[b]: docs/missing.md", "no such file"},
		{"another scheme", "[a](ftp://example.invalid/x)", "scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"README.md":         {Data: []byte(tc.readme + "\n")},
				"docs/guide.md":     {Data: []byte(target)},
				"docs/images/a.png": {Data: []byte("png")},
			}
			got := checkLinks(fsys, []string{"README.md"})
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("want no problem, got %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("want one problem with %q, got %q", tc.want, got)
			}
		})
	}
}

// markdownFiles are the README and every Markdown file under docs/, as paths from the
// repository's root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := fs.WalkDir(os.DirFS(".."), "docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	// inlineLink finds the target of [text](target) and ![alt](target), with an optional title.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition is a reference-style link's definition: [label]: target.
	refDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	heading       = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	scheme        = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// linkText keeps the text of a link or image inside a heading.
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// checkLinks returns one line for each link of files (Markdown, slash paths in fsys) that does
// not resolve.
func checkLinks(fsys fs.FS, files []string) []string {
	var problems []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(name string) (map[string]bool, error) {
		if a, ok := anchors[name]; ok {
			return a, nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		anchors[name] = headingAnchors(string(b))
		return anchors[name], nil
	}
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", file, err))
			continue
		}
		for _, l := range links(string(b)) {
			if why := resolve(fsys, file, l.target, anchorsOf); why != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file, l.line, l.target, why))
			}
		}
	}
	return problems
}

// resolve says why target, a link in file, does not resolve, or "" when it does.
func resolve(fsys fs.FS, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if m := scheme.FindString(target); m != "" {
		switch strings.ToLower(m) {
		case "http:", "https:", "mailto:":
			return "" // not fetched; a local server's address is as good as any
		}
		return "a link of another scheme than http, https or mailto"
	}
	p, frag, _ := strings.Cut(target, "#")
	if strings.HasPrefix(p, "/") {
		return "an absolute path: link relative to the file"
	}
	name := file
	if p != "" {
		unescaped, err := url.PathUnescape(p)
		if err != nil {
			return "an unreadable path"
		}
		name = path.Join(path.Dir(file), unescaped)
		if name == ".." || strings.HasPrefix(name, "../") {
			return "outside the repository"
		}
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return "no such file in the repository"
	}
	if frag == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(name, ".md") {
		return "an anchor into a file that is not Markdown"
	}
	a, err := anchorsOf(name)
	if err != nil {
		return err.Error()
	}
	if !a[frag] {
		return fmt.Sprintf("no heading with the anchor #%s in %s", frag, name)
	}
	return ""
}

type link struct {
	line   int
	target string
}

// links are the link targets of a Markdown text, outside code blocks and code spans.
func links(text string) []link {
	var out []link
	inFence := fenceTracker{}
	for i, line := range strings.Split(text, "\n") {
		if inFence.step(line) {
			continue
		}
		line = withoutCodeSpans(line)
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refDefinition.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown text: the heading's
// text in lower case, punctuation but - and _ removed, spaces as -; the second of two equal
// ones gets -1, the third -2. Headings inside fenced code blocks are none.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := fenceTracker{}
	for _, line := range strings.Split(text, "\n") {
		if inFence.step(line) {
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := slugOf(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugOf is GitHub's anchor for a heading's text.
func slugOf(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fenceTracker follows fenced code blocks (``` or ~~~, indented or not) line by line.
type fenceTracker struct {
	marker string // the opening fence while inside a block
}

// step reads one line and reports whether it belongs to a code block (a fence included).
func (f *fenceTracker) step(line string) bool {
	trimmed := strings.TrimLeft(line, " \t")
	if f.marker != "" {
		if strings.HasPrefix(trimmed, f.marker) && strings.Trim(trimmed, f.marker[:1]+" \t") == "" {
			f.marker = ""
		}
		return true
	}
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(trimmed, c+c+c) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
			f.marker = strings.Repeat(c, n)
			return true
		}
	}
	return false
}

// withoutCodeSpans blanks the code spans of a line, which hold no links.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for {
		i := strings.Index(line, "`")
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		ticks := line[i : i+n]
		end := -1
		for j := i + n; j < len(line); {
			k := strings.Index(line[j:], ticks)
			if k < 0 {
				break
			}
			k += j
			m := len(line[k:]) - len(strings.TrimLeft(line[k:], "`"))
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 { // an unclosed run of backticks is literal text
			b.WriteString(line[:i+n])
			line = line[i+n:]
			continue
		}
		b.WriteString(line[:i])
		b.WriteString(strings.Repeat(" ", end+n-i))
		line = line[end+n:]
	}
}
