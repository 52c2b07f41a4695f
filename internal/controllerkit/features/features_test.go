package features

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestDefaultsAreKarmadas(t *testing.T) {
	g := New()
	if g.Enabled(PropagationPolicyPreemption) {
		t.Error("PropagationPolicyPreemption is on by default; Karmada has it off")
	}
	if !g.Enabled(PropagateDeps) {
		t.Error("PropagateDeps is off by default; Karmada has it on")
	}
	if g.Enabled(MultiClusterService) {
		t.Error("MultiClusterService is on by default; Karmada has it off")
	}
	if Or(nil) != Defaults || Defaults.Enabled(PropagationPolicyPreemption) {
		t.Error("Or(nil) is not the default gate")
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name, value              string
		wantPreemption, wantDeps bool
		wantErr                  string
	}{
		{name: "empty keeps the defaults", value: "", wantDeps: true},
		{name: "preemption on", value: "PropagationPolicyPreemption=true", wantPreemption: true, wantDeps: true},
		{name: "both set", value: "PropagationPolicyPreemption=true,PropagateDeps=false", wantPreemption: true},
		{name: "an unknown gate is refused by name", value: "NoSuchGate=true", wantErr: "NoSuchGate"},
		{name: "a value that is not a boolean is refused", value: "PropagateDeps=maybe", wantErr: "PropagateDeps=maybe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			err := g.Set(tt.value)
			parseErr := Check(tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || parseErr == nil {
					t.Fatalf("Set(%q) = %v, Check error %v; want an error naming %q", tt.value, err, parseErr, tt.wantErr)
				}
				return
			}
			if err != nil || parseErr != nil {
				t.Fatalf("Set(%q) = %v, Check error %v", tt.value, err, parseErr)
			}
			if g.Enabled(PropagationPolicyPreemption) != tt.wantPreemption || g.Enabled(PropagateDeps) != tt.wantDeps {
				t.Errorf("after Set(%q): preemption %v, deps %v; want %v, %v", tt.value,
					g.Enabled(PropagationPolicyPreemption), g.Enabled(PropagateDeps), tt.wantPreemption, tt.wantDeps)
			}
		})
	}
}

func TestFlag(t *testing.T) {
	g := New()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	g.AddFlag(fs)
	if err := fs.Parse([]string{"--feature-gates=PropagationPolicyPreemption=true"}); err != nil {
		t.Fatal(err)
	}
	if !g.Enabled(PropagationPolicyPreemption) {
		t.Error("--feature-gates did not turn PropagationPolicyPreemption on")
	}
	if help := fs.Lookup("feature-gates").Usage; !strings.Contains(help, "PropagationPolicyPreemption") || !strings.Contains(help, "PropagateDeps") {
		t.Errorf("the flag's help does not list the gates: %s", help)
	}
}
