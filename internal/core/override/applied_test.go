package override

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestOutcomesAreKarmadasEventsPerPolicyAndCluster(t *testing.T) {
	applied := Applied{
		ClusterOverrides: []AppliedOverride{{PolicyName: "global"}},
		Overrides:        []AppliedOverride{{PolicyName: "env"}, {PolicyName: "env"}, {PolicyName: "image"}},
	}
	var got []string
	for _, o := range Outcomes("shop", "member1", applied, nil) {
		if o.Failure() != nil {
			t.Errorf("%s: a success with a failure", o.Instance())
		}
		got = append(got, o.Message())
	}
	want := []string{
		"Apply cluster override policy(global) for cluster(member1) succeed.",
		"Apply override policy(shop/env) for cluster(member1) succeed.",
		"Apply override policy(shop/image) for cluster(member1) succeed.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
	failed := Outcomes("shop", "member2", Applied{}, fmt.Errorf("override for cluster member2: %w",
		&Error{PolicyKind: KindOverridePolicy, PolicyNamespace: "shop", PolicyName: "broken", Field: "plaintext", Err: errors.New("missing path")}))
	if len(failed) != 1 || failed[0].Failure() == nil ||
		failed[0].Message() != "Apply override policy(shop/broken) for cluster(member2) failed: missing path" {
		t.Errorf("failure outcomes %+v", failed)
	}
	if failed[0].Instance() == Outcomes("shop", "member1", Applied{Overrides: []AppliedOverride{{PolicyName: "broken"}}}, nil)[0].Instance() {
		t.Errorf("one policy in two clusters shares an instance")
	}
	if got := Outcomes("shop", "member1", Applied{}, errors.New("not an override")); got != nil {
		t.Errorf("an error of no policy gave %+v", got)
	}
}
