package templates

import "testing"

// Each text of the dashboard is in one part only: joined, a second one would silently win.
func TestDashboardPartsDoNotOverlap(t *testing.T) {
	in := map[string]int{}
	for i, p := range dashParts {
		for _, w := range []Words{p.es, p.en} {
			for k := range w {
				if j, ok := in[k]; ok && j != i {
					t.Errorf("%q is in parts %d and %d", k, j, i)
				}
				in[k] = i
			}
		}
	}
	if len(in) != len(dashES) || len(dashES) != len(dashEN) {
		t.Errorf("%d keys in the parts, %d Spanish texts, %d English", len(in), len(dashES), len(dashEN))
	}
}
