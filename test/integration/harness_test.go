package integration

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/namespace"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// mode is one setting of the propagation path's fast paths.
type mode struct {
	// name names the subtest.
	name string
	// suffix ends the name of every namespace a test of this mode uses.
	suffix    string
	fastPaths fastpath.Options
	// featureGates is the controllers' --feature-gates value.
	featureGates string
}

// modes are the settings every test runs with: the fast paths on, as
// `flotilla controller-manager` runs by default, then all off, the plain
// level-based controllers, which must converge to the same state.
var modes = []mode{
	{name: "fast-paths-on", suffix: "on", fastPaths: fastpath.All(), featureGates: preemptionOn + "," + multiClusterServiceOn},
	{name: "fast-paths-off", suffix: "off", fastPaths: fastpath.Options{}, featureGates: preemptionOn + "," + multiClusterServiceOn},
}

// preemptionOn turns Karmada's policy preemption on: TestControllers runs
// the preemption cases (TestControllersWithPreemptionOff the gate's default).
const preemptionOn = "PropagationPolicyPreemption=true"

// multiClusterServiceOn turns the MultiClusterService gate on (alpha, off by
// default; `flotilla up` turns it on), for the multiclusterservice and
// endpointsliceDispatch controllers that the multiclusterservice cases
// check.
const multiClusterServiceOn = "MultiClusterService=true"

// integrationCase is one behaviour of one controller. It runs in a
// namespace of its own, synced to both members before it starts.
type integrationCase struct {
	name string
	run  func(e *env)
}

// suite is the table of cases of one controller.
type suite struct {
	controller string
	cases      []integrationCase
}

// suites lists every controller's cases.
func suites() []suite {
	return []suite{
		{"cluster", clusterCases},
		{"unifiedauth", unifiedAuthCases},
		{"detector", slices.Concat(detectorCases, preemptionCases, lazyCases, dependentOverrideCases, schedulePriorityCases)},
		{"scheduler", schedulerCases},
		{"binding", slices.Concat(bindingCases, suspensionCases)},
		{"execution", executionCases},
		{"status", statusCases},
		{"dependencies", dependencyCases},
		{"namespace", namespaceCases},
		{"validation", slices.Concat(validationCases, deletionProtectionCases)},
		{"workloadrebalancer", workloadRebalancerCases},
		{"gracefuleviction", gracefulEvictionCases},
		{"serviceexport", serviceExportCases},
		{"endpointslice", endpointSliceCases},
		{"serviceimport", serviceImportCases},
		{"multiclusterservice", multiClusterServiceCases},
	}
}

// TestControllers runs every case once per mode, against controllers
// started for that mode. Within a mode all cases run at once, each in its
// own namespace (<controller>-<n>-<mode>): they are mostly waiting for the
// controllers, and -parallel (GOMAXPROCS by default) would serialise them
// on a small machine, so they are started as concurrent subtests rather
// than with t.Parallel.
func TestControllers(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctl := runControllers(t, m)
			var wg sync.WaitGroup
			for _, s := range suites() {
				wg.Go(func() {
					t.Run(s.controller, func(t *testing.T) {
						var cases sync.WaitGroup
						for i, c := range s.cases {
							cases.Go(func() {
								t.Run(c.name, func(t *testing.T) {
									c.run(newEnv(t, ctl, fmt.Sprintf("%s-%d-%s", s.controller, i+1, m.suffix)))
								})
							})
						}
						cases.Wait()
					})
				})
			}
			wg.Wait()
		})
	}
}

// controllers is a controller manager running in this process.
type controllers struct {
	mode mode
	// done is closed when the manager has returned; err is then its error.
	done chan struct{}
	err  error
	// stop cancels the manager and waits (a minute at most) for it to
	// return, failing the test on an error; the test's cleanup calls it too.
	stop func()
}

// runControllers starts every controller but the cluster controller (the
// stack runs that one) with m's fast paths, logging to
// <data-dir>/logs/integration-controllers-<mode>.log, and stops them when
// t's subtests are done. tweaks change the options before the start (a
// narrower --controllers, a fake clock).
func runControllers(t *testing.T, m mode, tweaks ...func(*controllermanager.Options)) *controllers {
	t.Helper()
	logPath := filepath.Join(theStack.dataDir, "logs", "integration-controllers-"+m.suffix+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	klog.SetOutput(logFile)
	gates := features.New()
	if err := gates.Set(m.featureGates); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background())
	ctl := &controllers{mode: m, done: make(chan struct{})}
	opts := controllermanager.Options{
		Config:                       theStack.controlPlaneConfig,
		Controllers:                  []string{"*", "-cluster"},
		MetricsAddr:                  "0",
		HealthAddr:                   "0",
		PprofAddr:                    "0",
		SkippedPropagatingNamespaces: namespace.DefaultSkippedPatterns,
		FastPaths:                    m.fastPaths,
		Features:                     gates,
		SkipNameValidation:           true,
	}
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	go func() {
		defer close(ctl.done)
		ctl.err = controllermanager.Run(ctx, opts)
	}()
	var once sync.Once
	ctl.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-ctl.done:
				if ctl.err != nil {
					t.Errorf("the controllers (%s) stopped with: %v", m.name, ctl.err)
				}
			case <-time.After(time.Minute):
				t.Errorf("the controllers (%s) did not stop within a minute", m.name)
			}
			klog.Flush()
			klog.SetOutput(io.Discard)
			logFile.Close()
			if t.Failed() {
				t.Logf("the controllers' log is %s", logPath)
			}
		})
	}
	t.Cleanup(ctl.stop)
	return ctl
}

// env is what a case works with: the test, clients of every API server, and
// its own namespace.
type env struct {
	*testing.T
	ctx          context.Context
	controlPlane client.Client
	members      map[string]client.Client
	// ns is the case's namespace, on the control plane and in both members.
	ns  string
	ctl *controllers
}

// waitTimeout bounds every wait for the controllers. They normally converge
// within seconds; the bound only turns a hang into a failure.
const waitTimeout = time.Minute

// newEnv creates the case's namespace and waits until namespace sync has
// created it in every member (namespaced templates need it there). When
// the case ends its namespace is deleted, and waited for: the next mode's
// controllers do not see the case's objects, and every finalizer the
// controllers put on them (bindings, Works) must be released for the
// namespace to go.
func newEnv(t *testing.T, ctl *controllers, ns string) *env {
	t.Helper()
	e := &env{T: t, ctx: t.Context(), controlPlane: theStack.controlPlane, members: theStack.members, ns: ns, ctl: ctl}
	e.create(e.controlPlane, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	t.Cleanup(func() { deleteNamespace(t, ctl, ns) })
	for _, m := range memberNames {
		waitFor(e, e.members[m], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, "namespace "+ns+" in "+m, exists[*corev1.Namespace])
	}
	return e
}

// deleteNamespace deletes the case's namespace on the control plane and
// waits until it is gone: the control plane's namespace controller deletes
// the templates and bindings in it, and the bindings go once the binding
// and execution controllers have removed their Works and member copies.
func deleteNamespace(t *testing.T, ctl *controllers, ns string) {
	t.Helper()
	// t.Context is done by now. Deletion takes the longest of all waits
	// (the control plane's namespace controller works in passes), hence
	// the longer bound.
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	key := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := theStack.controlPlane.Delete(ctx, key); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete namespace %s: %v", ns, err)
		return
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		got := &corev1.Namespace{}
		err := theStack.controlPlane.Get(ctx, client.ObjectKeyFromObject(key), got)
		if apierrors.IsNotFound(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("namespace %s (%s) was not deleted within %s; last: %v %+v", ns, ctl.mode.name, 2*waitTimeout, err, got.Status)
			return
		case <-ctl.done:
			t.Errorf("namespace %s: the controllers stopped before it was deleted", ns)
			return
		case <-tick.C:
		}
	}
}

// eventually polls cond every 100ms until it holds; after waitTimeout, or
// as soon as the controllers have stopped, it fails the test with cond's
// last explanation.
func (e *env) eventually(what string, cond func() (bool, string)) {
	e.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, status := cond()
		if ok {
			return
		}
		select {
		case <-e.ctl.done:
			e.Fatalf("waiting for %s: the controllers stopped (%v); last: %s", what, e.ctl.err, status)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			e.Fatalf("timed out after %s waiting for %s (%s); last: %s", waitTimeout, what, e.ctl.mode.name, status)
		}
	}
}

// waitFor polls the object named like obj in c until cond holds, and
// returns it as last read. obj is only a key: it is not modified.
func waitFor[T client.Object](e *env, c client.Client, obj T, what string, cond func(T) (bool, string)) T {
	e.Helper()
	key := client.ObjectKeyFromObject(obj)
	var got T
	e.eventually(what, func() (bool, string) {
		got = obj.DeepCopyObject().(T) // a fresh object per read: decoding merges maps
		if err := c.Get(e.ctx, key, got); err != nil {
			return false, err.Error()
		}
		return cond(got)
	})
	return got
}

// exists is a waitFor condition that holds once the object is there.
func exists[T client.Object](T) (bool, string) { return true, "" }

// waitGone polls until the object named like obj is gone from c.
func (e *env) waitGone(c client.Client, obj client.Object, what string) {
	e.Helper()
	key := client.ObjectKeyFromObject(obj)
	e.eventually(what, func() (bool, string) {
		err := c.Get(e.ctx, key, obj.DeepCopyObject().(client.Object))
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "still there"
	})
}

// create creates obj in c and fails the test if it cannot.
func (e *env) create(c client.Client, obj client.Object) {
	e.Helper()
	if err := c.Create(e.ctx, obj); err != nil {
		e.Fatalf("create %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// createClusterScoped creates a cluster-scoped obj on the control plane and
// deletes it when the case ends: deleting the case's namespace does not.
func (e *env) createClusterScoped(obj client.Object) {
	e.Helper()
	e.create(e.controlPlane, obj)
	e.Cleanup(func() {
		if err := e.controlPlane.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
			e.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// delete deletes obj from c and fails the test if it cannot.
func (e *env) delete(c client.Client, obj client.Object) {
	e.Helper()
	if err := c.Delete(e.ctx, obj); err != nil {
		e.Fatalf("delete %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// update reads the object named like obj from c, applies change and writes
// it back, again on a conflict.
func update[T client.Object](e *env, c client.Client, obj T, change func(T)) {
	e.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := obj.DeepCopyObject().(T)
		if err := c.Get(e.ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return err
		}
		change(cur)
		return c.Update(e.ctx, cur)
	})
	if err != nil {
		e.Fatalf("update %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// workOf is the key of the Work of a template of the case's namespace in a
// cluster's execution namespace.
func (e *env) workOf(cluster, kind, name string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(cluster), binding.WorkName(kind, e.ns, name)
	return w
}

// manifest decodes a Work's only manifest.
func manifest(w *workv1alpha1.Work) (*unstructured.Unstructured, error) {
	if len(w.Spec.Workload.Manifests) != 1 {
		return nil, fmt.Errorf("work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
	}
	m := &unstructured.Unstructured{}
	if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		return nil, fmt.Errorf("work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return m, nil
}

// deployment is a Deployment template named name in the case's namespace.
func (e *env) deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// configMap is a ConfigMap named name in the case's namespace.
func (e *env) configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Data: data}
}

// policyBuilder builds a PropagationPolicy of the case's namespace.
type policyBuilder struct {
	p *policyv1alpha1.PropagationPolicy
}

// policy starts a PropagationPolicy named name in the case's namespace.
func (e *env) policy(name string) *policyBuilder {
	return &policyBuilder{&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}}
}

// selecting adds a resource selector of kind (apps/v1 Deployment or v1
// ConfigMap), by name when name is not empty.
func (b *policyBuilder) selecting(kind, name string) *policyBuilder {
	apiVersion := "v1"
	if kind == "Deployment" {
		apiVersion = "apps/v1"
	}
	b.p.Spec.ResourceSelectors = append(b.p.Spec.ResourceSelectors, policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name})
	return b
}

// to places on the named clusters.
func (b *policyBuilder) to(clusters ...string) *policyBuilder {
	b.p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}
	return b
}

// priority sets spec.priority.
func (b *policyBuilder) priority(p int32) *policyBuilder {
	b.p.Spec.Priority = ptr.To(p)
	return b
}

// duplicated gives every cluster all the replicas.
func (b *policyBuilder) duplicated() *policyBuilder {
	b.p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
	return b
}

// weighted divides the replicas by static weights, one per cluster, in the
// order of the clusters given to `to`.
func (b *policyBuilder) weighted(weights ...int64) *policyBuilder {
	prefs := &policyv1alpha1.ClusterPreferences{}
	for i, w := range weights {
		prefs.StaticWeightList = append(prefs.StaticWeightList, policyv1alpha1.StaticClusterWeight{
			TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{b.p.Spec.Placement.ClusterAffinity.ClusterNames[i]}},
			Weight:        w,
		})
	}
	b.p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          prefs,
	}
	return b
}

// obj returns the policy.
func (b *policyBuilder) obj() *policyv1alpha1.PropagationPolicy { return b.p }

// labelOverride is an OverridePolicy of the case's namespace that adds
// labels to the Deployment name in cluster.
func (e *env) labelOverride(policyName, name, cluster string, labels map[string]string) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName, Namespace: e.ns},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}},
				Overriders:    policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: labels}}},
			}},
		},
	}
}

// describe renders a short view of a value for wait explanations.
func describe(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprintf("%+v", p)
	}
	return strings.Join(s, " ")
}
