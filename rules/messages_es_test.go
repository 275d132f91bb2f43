package rules_test

import (
	"os"
	"regexp"
	"testing"

	"payouts/rules"
)

// Every code of the catalogue reads in Spanish too, and so does every history note
// the rules write.
func TestEveryCodeAndNoteHasItsSpanish(t *testing.T) {
	for _, c := range rules.Catalogue {
		if es := rules.MessageIn("es", c.Code, "ENGLISH"); es == "ENGLISH" || es == "" {
			t.Errorf("code %s has no Spanish message", c.Code)
		}
		if en := rules.MessageIn("en-US,es;q=0.5", c.Code, "ENGLISH"); en != "ENGLISH" {
			t.Errorf("code %s: an English client reads %q", c.Code, en)
		}
	}
	// The notes are the literal last arguments of Move, finish and Settle, and Outcome notes.
	notes := regexp.MustCompile(`(?:Note: |(?:Move|finish|Settle)\([^)\n]*, )"([a-zA-Z][^"]+)"`)
	found := 0
	defer func() {
		if found < 10 {
			t.Errorf("found %d notes in the sources: the pattern no longer finds them", found)
		}
	}()
	for _, f := range []string{"lifecycle.go", "sandbox/rail.go", "sandbox/scripts.go", "claim.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range notes.FindAllStringSubmatch(string(src), -1) {
			found++
			if rules.NoteIn("es-PE", m[1]) == m[1] {
				t.Errorf("%s: the note %q has no Spanish", f, m[1])
			}
		}
	}
	for lang, want := range map[string]bool{"es": true, "es-CO,en;q=0.8": true, "ES": true, "en": false, "": false, "en-GB, es": false, "fr": false} {
		if rules.Spanish(lang) != want {
			t.Errorf("Spanish(%q) = %v", lang, !want)
		}
	}
}
