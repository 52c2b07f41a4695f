package metricsadapter

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cmv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
)

func podValue(name, value string) cmv1beta2.MetricValue {
	return cmv1beta2.MetricValue{
		DescribedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: name},
		Value:           resource.MustParse(value),
	}
}

func TestMergeByObjectSumsAnObjectSeveralMembersReport(t *testing.T) {
	vals := map[string]*cmv1beta2.MetricValueList{
		"member1": {Items: []cmv1beta2.MetricValue{podValue("b", "10"), podValue("a", "5")}},
		"member2": {Items: []cmv1beta2.MetricValue{podValue("c", "1"), podValue("a", "500m")}},
	}
	got, err := mergeByObject([]string{"member1", "member2", "member3"}, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a=5500m", "b=10", "c=1"}
	if len(got.Items) != len(want) {
		t.Fatalf("got %d items, want %v", len(got.Items), want)
	}
	for i, it := range got.Items {
		if s := it.DescribedObject.Name + "=" + it.Value.String(); s != want[i] {
			t.Errorf("item %d = %s, want %s", i, s, want[i])
		}
	}
}

func TestFanOutLeavesOutFailingMembers(t *testing.T) {
	got := fanOut(&leftOut{}, []string{"ok", "broken"}, "test", func(_ context.Context, c string) (int, error) {
		if c == "broken" {
			return 0, errors.New("connection refused")
		}
		return 7, nil
	})
	if len(got) != 1 || got["ok"] != 7 {
		t.Errorf("fanOut = %v, want only ok=7", got)
	}
}

func TestAskKeepsNotFoundAsAnAnswerAndPrefersRealErrors(t *testing.T) {
	nf := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")
	vals, errs := ask(&leftOut{}, []string{"a", "b", "c"}, "test", func(_ context.Context, c string) (int, error) {
		switch c {
		case "a":
			return 0, nf
		case "b":
			return 0, errors.New("timeout")
		}
		time.Sleep(time.Millisecond)
		return 3, nil
	})
	if len(vals) != 1 || vals["c"] != 3 {
		t.Errorf("vals = %v, want c=3", vals)
	}
	if !apierrors.IsNotFound(errs["a"]) || errs["b"] == nil {
		t.Errorf("errs = %v", errs)
	}
	// With no value at all, a real failure is reported before NotFound.
	if err := firstErr(map[string]error{"a": nf, "b": errors.New("timeout")}, []string{"a", "b"}, nil); apierrors.IsNotFound(err) || err == nil {
		t.Errorf("firstErr = %v, want b's failure", err)
	}
	if err := firstErr(map[string]error{"a": nf}, []string{"a"}, nil); !apierrors.IsNotFound(err) {
		t.Errorf("firstErr = %v, want NotFound", err)
	}
}
