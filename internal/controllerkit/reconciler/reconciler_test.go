package reconciler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

func TestResult(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "works"}, "w", errors.New("changed"))
	other := errors.New("boom")
	every := ctrl.Result{RequeueAfter: time.Minute}
	cases := []struct {
		name    string
		res     ctrl.Result
		err     error
		want    ctrl.Result
		wantErr error
	}{
		{"no error keeps the result", every, nil, every, nil},
		{"a conflict is retried at once, without the error", every, fmt.Errorf("write: %w", conflict), ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil},
		{"an error drops the result", every, other, ctrl.Result{}, other},
		{"a terminal error drops the result", every, Terminal(other), ctrl.Result{}, Terminal(other)},
		{"a terminal conflict stays terminal", ctrl.Result{}, Terminal(conflict), ctrl.Result{}, Terminal(conflict)},
		{"conflicts joined are a conflict", every, errors.Join(conflict, fmt.Errorf("other write: %w", conflict)), ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil},
		{"a conflict joined to another error does not hide it", every, errors.Join(conflict, other), ctrl.Result{}, errors.Join(conflict, other)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Result(c.res, c.err)
			if got != c.want || fmt.Sprint(err) != fmt.Sprint(c.wantErr) || IsTerminal(err) != IsTerminal(c.wantErr) {
				t.Errorf("Result = %+v, %v; want %+v, %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestTerminal(t *testing.T) {
	if Terminal(nil) != nil {
		t.Error("Terminal(nil) is not nil")
	}
	err := fmt.Errorf("reconcile: %w", Terminal(errors.New("bad script")))
	if !IsTerminal(err) {
		t.Errorf("IsTerminal(%v) = false for a wrapped terminal error", err)
	}
	if IsTerminal(errors.New("bad script")) || IsTerminal(nil) {
		t.Error("IsTerminal is true for a plain error or nil")
	}
}

func TestClock(t *testing.T) {
	fake := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if got := Now(fake); !got.Equal(fake.Now()) {
		t.Errorf("Now(fake) = %s, want %s", got, fake.Now())
	}
	var delayed clock.WithDelayedExecution
	if _, ok := Clock(delayed).(clock.RealClock); !ok {
		t.Errorf("Clock(nil WithDelayedExecution) = %T, want the real clock", Clock(delayed))
	}
	if got := Now(nil); time.Since(got) > time.Minute || time.Since(got) < 0 {
		t.Errorf("Now(nil) = %s, not the real time", got)
	}
}
