package agenttext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutKeepsRunesWhole(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is 2 bytes: not split
		{"日本", 4, "日"},
		{strings.Repeat("\x80", 10), 4, "\x80\x80\x80\x80"}, // invalid input: cut near n anyway
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestItemQuotesWhatIsNotPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"gemini-2.5-pro": "gemini-2.5-pro",
		"":               `""`,
		"a b":            "a b",
		"\x1b[2J":        `"\x1b[2J"`,
		"a\nb":           `"a\nb"`,
		"\xff":           `"\xff"`,
	} {
		if got := Item(in); got != want {
			t.Errorf("Item(%q) = %s, want %s", in, got, want)
		}
	}
	long := strings.Repeat("é", MaxItemBytes)
	if got := Item(long); len(got) > MaxItemBytes+3 || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("Item(long) = %q", got)
	}
}

func TestListNamesAFewAndCountsTheRest(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	got := strings.Join(List(len(ids), func(i int) string { return ids[i] }), ", ")
	if want := "a, b, c, d, e, f, g, h, and 2 more"; got != want {
		t.Errorf("List = %q, want %q", got, want)
	}
	if got := List(2, func(i int) string { return ids[i] }); len(got) != 2 {
		t.Errorf("List of 2 = %q", got)
	}
	if got := List(0, nil); len(got) != 0 {
		t.Errorf("List of 0 = %q", got)
	}
}

func TestText(t *testing.T) {
	if got := Text("short"); got != "short" {
		t.Errorf("Text(short) = %q", got)
	}
	got := Text(strings.Repeat("x", 10_000))
	if len(got) > MaxTextBytes+32 || !strings.HasSuffix(got, "... (10000 bytes)") {
		t.Errorf("Text(long) = %q", got)
	}
}
