package cronfederatedhpa

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

func TestSameWorkloadComparesKindNameAndGroupOnly(t *testing.T) {
	ref := func(apiVersion, kind, name string) autoscalingv2.CrossVersionObjectReference {
		return autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: name}
	}
	web := ref("apps/v1", "Deployment", "web")
	for _, tc := range []struct {
		other autoscalingv2.CrossVersionObjectReference
		want  bool
	}{
		{ref("apps/v1", "Deployment", "web"), true},
		{ref("apps/v1beta2", "Deployment", "web"), true},
		{ref("apps/v1", "Deployment", "api"), false},
		{ref("apps/v1", "StatefulSet", "web"), false},
		{ref("example.io/v1", "Deployment", "web"), false},
		{ref("a/b/c", "Deployment", "web"), false},
	} {
		if got := sameWorkload(web, tc.other); got != tc.want {
			t.Errorf("sameWorkload(%v, %v) = %v, want %v", web, tc.other, got, tc.want)
		}
	}
}
