package scheduling

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/handler"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestPriorityOrdersBindingsAboveFirstLists(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{}
	if got := Priority(rb); got != 0 {
		t.Errorf("no schedulePriority: %d, want 0", got)
	}
	rb.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: 1000}
	if got := Priority(rb); got != 1000 {
		t.Errorf("priority 1000: %d", got)
	}
	rb.Spec.SchedulePriority.Priority = -5000
	if got := Priority(rb); got <= handler.LowPriority {
		t.Errorf("a negative priority %d must stay above the first lists' %d", got, handler.LowPriority)
	}
}
