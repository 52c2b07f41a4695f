package federatedresourcequota

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// aggregatedStatus reads each applied quota Work's reflected ResourceQuota status, sorted by
// cluster, and leaves out Works not applied yet or with nothing reflected.
func TestAggregatedReadsAppliedWorks(t *testing.T) {
	work := func(cluster string, applied bool, status string) workv1alpha1.Work {
		w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-" + cluster, Name: "team"}}
		if applied {
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue}}
		}
		if status != "" {
			w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: []byte(status)}}}
		}
		return w
	}
	got, err := aggregated([]workv1alpha1.Work{
		work("member2", true, `{"hard":{"cpu":"2"},"used":{"cpu":"500m"}}`),
		work("member1", true, `{"hard":{"cpu":"1"},"used":{"cpu":"1"}}`),
		work("member3", false, `{"hard":{"cpu":"9"}}`),
		work("member4", true, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ClusterName != "member1" || got[1].ClusterName != "member2" {
		t.Fatalf("aggregated = %+v, want member1 and member2, sorted", got)
	}
	if used := got[1].Used["cpu"]; used.String() != "500m" {
		t.Errorf("member2 used %s, want 500m", used.String())
	}
	if _, err := aggregated([]workv1alpha1.Work{work("member1", true, `[1]`)}); err == nil {
		t.Error("a reflected status that is not a ResourceQuota's is not an error")
	}
}
