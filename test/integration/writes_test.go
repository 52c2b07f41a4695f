package integration

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
)

// TestFastPathsSaveWrites counts the control-plane writes (by verb and resource, events
// aside) the controllers make, and the API server takes, to propagate a Deployment to both
// members, update its image and delete it, once with the fast paths on and once with them
// off. The fast paths exist to save writes; the test fails when, with them on, a phase
// costs more than the table below allows or saves less than it says against the same
// phase with them off. A change that adds a write to the propagation path shows up here,
// in review.
func TestFastPathsSaveWrites(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	counts := map[string]map[string]writes{} // mode suffix -> phase -> writes
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			counts[m.suffix] = propagationWrites(t, m)
		})
	}
	if t.Failed() {
		return
	}
	for _, phase := range []string{"create", "update", "delete"} {
		on, off := counts["on"][phase], counts["off"][phase]
		t.Logf("%s: fast paths on %s; off %s", phase, on, off)
		for key, most := range writesAtMost[phase] {
			if on[key] > most {
				t.Errorf("%s with the fast paths on: %d %s, want at most %d (table writesAtMost)", phase, on[key], key, most)
			}
		}
		for key, saved := range writesSaved[phase] {
			if got := off[key] - on[key]; got < saved {
				t.Errorf("%s: the fast paths save %d %s (on %d, off %d), want at least %d (table writesSaved)", phase, got, key, on[key], off[key], saved)
			}
		}
	}
}

// writesAtMost are the control-plane writes one phase may cost with the fast paths on, for
// a Deployment propagated to two members: "verb resource[/subresource]".
//
// Status reports are counted together under "status writes": how many there are depends on
// when the members report, so only their sum is bounded.
var writesAtMost = map[string]writes{
	"create": {
		"create resourcebindings": 1, // born scheduled and claimed (Preschedule): no placement patch
		"create works":            2,
		"status writes":           4,
	},
	"update": {
		"update resourcebindings": 1,
		"update works":            3,
		"status writes":           9,
	},
	"delete": {
		"delete works":            3,
		"update works":            2, // finalizers released
		"update resourcebindings": 1,
		"delete resourcebindings": 1,
		"status writes":           2,
	},
}

// writesSaved are the writes the fast paths must save in a phase, against the same phase
// with them off.
var writesSaved = map[string]writes{
	"create": {
		"patch resourcebindings": 1, // Preschedule: the scheduler's placement patch
		"status writes":          1, // BornScheduled and the status gate
	},
}

// writes counts requests by "verb resource[/subresource]".
type writes map[string]int

func (w writes) String() string {
	keys := slices.Sorted(maps.Keys(w))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// writeCounter counts the writes the API server took through a rest.Config it wraps.
type writeCounter struct {
	mu   sync.Mutex
	seen writes
	last time.Time
}

func (c *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if verb, ok := writeVerbs[req.Method]; ok {
			if resource := resourceOf(req.URL.Path); resource != "events" {
				c.mu.Lock()
				// Only writes the API server took are counted: a create that lost a race
				// with the cache (AlreadyExists) or an update that met a conflict stored
				// nothing, and whether one happens depends on timing.
				if err == nil && resp.StatusCode < 300 {
					c.seen[verb+" "+resource]++
					if strings.HasSuffix(resource, "/status") {
						c.seen["status writes"]++
					}
				}
				c.last = time.Now()
				c.mu.Unlock()
			}
		}
		return resp, err
	})
}

// take returns what was counted since the last take and starts again.
func (c *writeCounter) take() writes {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.seen
	c.seen = writes{}
	return w
}

// quiet waits until no write has passed for quietFor (at most a minute: the status gate
// holds reports back 30 s at most).
func (c *writeCounter) quiet(t *testing.T) {
	t.Helper()
	const quietFor = 2 * time.Second
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		c.mu.Lock()
		idle := time.Since(c.last)
		c.mu.Unlock()
		if idle >= quietFor {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controllers kept writing for a minute: %s", c.take())
		}
	}
}

var writeVerbs = map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}

// resourceOf reads "resource[/subresource]" from an API path: /api/v1/namespaces/n/pods/p/status,
// /apis/g/v/namespaces/n/rs, /apis/g/v/clusters/c, /api/v1/namespaces/n.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return ""
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// propagationWrites runs the controllers of mode m with a counting client and returns the
// writes of each phase: create (template and policy until both Works are applied and the
// binding is FullyApplied), update (a new image until both Works carry it, applied) and
// delete (until the binding and its Works are gone).
func propagationWrites(t *testing.T, m mode) map[string]writes {
	counter := &writeCounter{seen: writes{}}
	ctl := runControllers(t, m, func(o *controllermanager.Options) {
		cfg := rest.CopyConfig(o.Config)
		cfg.Wrap(counter.wrap)
		o.Config = cfg
	})
	e := newEnv(t, ctl, "writes-"+m.suffix)
	counter.quiet(t)
	counter.take()
	out := map[string]writes{}

	dep := e.deployment("web", 2)
	e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to(memberNames...).duplicated().obj())
	e.create(e.controlPlane, dep)
	e.waitApplied("nginx:1.27")
	counter.quiet(t)
	out["create"] = counter.take()

	update(e, e.controlPlane, dep, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
	e.waitApplied("nginx:1.28")
	counter.quiet(t)
	out["update"] = counter.take()

	e.delete(e.controlPlane, dep)
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: e.ns}}
	e.waitGone(e.controlPlane, rb, "web's binding gone")
	for _, c := range memberNames {
		e.waitGone(e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c+" gone")
	}
	counter.quiet(t)
	out["delete"] = counter.take()
	return out
}

// waitApplied waits until both members run the Deployment web with image, its Works are
// Applied, and its binding is FullyApplied with both members' status.
func (e *env) waitApplied(image string) {
	e.Helper()
	for _, c := range memberNames {
		waitFor(e, e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns}}, "web in "+c+" runs "+image,
			func(d *appsv1.Deployment) (bool, string) {
				got := d.Spec.Template.Spec.Containers[0].Image
				return got == image, got
			})
		waitFor(e, e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c+" Applied", func(w *workv1alpha1.Work) (bool, string) {
			return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied), describe("conditions", w.Status.Conditions)
		})
	}
	waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: e.ns}},
		"web-deployment FullyApplied", func(b *workv1alpha2.ResourceBinding) (bool, string) {
			return meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.FullyApplied) && len(b.Status.AggregatedStatus) == len(memberNames),
				describe("conditions", b.Status.Conditions, "aggregated", len(b.Status.AggregatedStatus))
		})
}
