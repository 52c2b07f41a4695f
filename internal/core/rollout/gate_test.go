package rollout

import (
	"strings"
	"testing"
)

func TestDigestIgnoresReplicasAndGeneration(t *testing.T) {
	m := func(replicas int64, gen, image string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "web", "annotations": map[string]any{generationAnnotation: gen, "keep": "x"}},
			"spec":     map[string]any{"replicas": replicas, "template": map[string]any{"image": image}},
		}
	}
	base, err := Digest(m(2, "1", "nginx:1"))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(m(5, "2", "nginx:1")); d != base {
		t.Errorf("a scale (replicas and generation) changed the digest: %s != %s", d, base)
	}
	if d, _ := Digest(m(2, "2", "nginx:2")); d == base {
		t.Error("an image change kept the digest")
	}
	orig := m(2, "1", "nginx:1")
	_, _ = Digest(orig)
	if orig["spec"].(map[string]any)["replicas"] != int64(2) {
		t.Error("Digest modified its input")
	}
}

func TestGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   GateInput
		want Action
	}{
		{"no strategy", GateInput{Current: "a", New: "b", HasWork: true}, Write},
		{"first placement", GateInput{Staged: true, New: "b"}, Write},
		{"unchanged", GateInput{Staged: true, HasWork: true, Current: "a", New: "a"}, Write},
		{"changed, not admitted", GateInput{Staged: true, HasWork: true, Current: "a", New: "b"}, Hold},
		{"changed, admitted", GateInput{Staged: true, HasWork: true, Current: "a", New: "b", Admitted: "b"}, Write},
		{"a stale admission does not pass a newer change", GateInput{Staged: true, HasWork: true, Current: "b", New: "c", Admitted: "b"}, Hold},
		{"aborted: back to the previous", GateInput{Staged: true, HasWork: true, Current: "b", New: "b", Aborted: true, Previous: "a"}, Revert},
		{"aborted, already back", GateInput{Staged: true, HasWork: true, Current: "a", New: "b", Aborted: true, Previous: "a"}, Hold},
		{"aborted, nothing kept", GateInput{Staged: true, HasWork: true, Current: "b", New: "b", Aborted: true}, Write},
	} {
		if got := Gate(tc.in); got != tc.want {
			t.Errorf("%s: Gate = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestManifestEncodingRoundTrips(t *testing.T) {
	raw := []byte(`{"kind":"Deployment","spec":{"template":"` + strings.Repeat("x", 5000) + `"}}`)
	enc, err := EncodeManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) >= len(raw) {
		t.Errorf("encoded %d bytes into %d: not compressed", len(raw), len(enc))
	}
	got, err := DecodeManifest(enc)
	if err != nil || string(got) != string(raw) {
		t.Fatalf("round trip: %v, equal %v", err, string(got) == string(raw))
	}
	if _, err := DecodeManifest("not base64!"); err == nil || !strings.Contains(err.Error(), PreviousAnnotation) {
		t.Errorf("a damaged annotation: err %v, want one naming %s", err, PreviousAnnotation)
	}
}
