package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// Most tests run on a stack they share with others of the same member count: starting a
// stack costs 12-25 s, and shared ones are started once per lane at most. A test on a
// shared stack isolates itself by namespace and by names; when it ends, resetStack deletes
// what it left (namespaces, objects in the namespaces every stack starts with, custom
// resource definitions, Karmada policies) in the control plane and in the members, and
// waits until the members are back to what they held when the stack started. A test that
// fails, or that breaks its stack (markBroken), hands the next test a fresh one.
//
// Tests that need their own flags, break a stack on purpose or count what a stack does
// from its start call startStack instead.

// sharedStacks are the running shared stacks, in use or idle; TestMain stops them. There
// can be several of one member count: a test takes an idle one, or starts one when every
// stack of its size is in use by a test in the other lane. sharedMu guards the slice and
// the inUse flags.
var (
	sharedStacks []*sharedStack
	sharedMu     sync.Mutex
)

type sharedStack struct {
	dataDir  string
	members  int
	baseline map[string]map[types.UID]bool // per cluster ("" is the control plane): what it held once up
	broken   bool
	inUse    bool
	keep     bool // a test failed on it: stop keeps the data dir
}

// takeShared marks an idle running stack of that many members in use and returns it, or
// returns nil when there is none.
func takeShared(members int) *sharedStack {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, sh := range sharedStacks {
		if sh.members == members && !sh.inUse {
			sh.inUse = true
			return sh
		}
	}
	return nil
}

// addShared records a stack that has just started, in use.
func addShared(sh *sharedStack) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	sh.inUse = true
	sharedStacks = append(sharedStacks, sh)
}

// releaseShared makes sh idle again, or forgets it (gone: it is being stopped).
func releaseShared(sh *sharedStack, gone bool) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	sh.inUse = false
	if gone {
		sharedStacks = slices.DeleteFunc(sharedStacks, func(o *sharedStack) bool { return o == sh })
	}
}

// sharedStackOf gives a test a shared stack with that many members, once the test has a
// lane, starting one when none is idle. e2e tests are skipped with -short.
func sharedStackOf(t *testing.T, members int) *stack {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	class := laneSharedStack
	if longSharedTests[t.Name()] {
		class = laneSharedLong
	}
	inLane(t, class)
	sh := takeShared(members)
	if sh == nil {
		dir, err := os.MkdirTemp("", "flotilla-e2e-shared")
		if err != nil {
			t.Fatal(err)
		}
		sh = &sharedStack{dataDir: dir, members: members, broken: true}
		started := false
		t.Cleanup(func() {
			if !started {
				sh.stop() // up failed: nothing else will stop it
			}
		})
		s := &stack{t: t, dataDir: dir}
		s.up(members)
		sh.baseline = map[string]map[types.UID]bool{}
		for _, cluster := range sh.clusters() {
			objs, err := sh.list(cluster)
			if err != nil {
				t.Fatalf("listing %s: %v", clusterName(cluster), err)
			}
			sh.baseline[cluster] = map[types.UID]bool{}
			for _, o := range objs {
				sh.baseline[cluster][o.uid] = true
			}
		}
		sh.broken = false
		started = true
		addShared(sh)
	}
	s := &stack{t: t, dataDir: sh.dataDir, shared: sh}
	t.Cleanup(func() {
		if !t.Failed() && !sh.broken {
			start := time.Now()
			err := sh.reset()
			if err == nil {
				t.Logf("the shared %d-member stack was reset in %s", members, time.Since(start).Round(100*time.Millisecond))
				releaseShared(sh, false)
				return
			}
			t.Logf("the shared %d-member stack could not be reset, the next test gets a fresh one: %v", members, err)
		}
		releaseShared(sh, true)
		if t.Failed() {
			// Its logs are what explains the failure: the processes stop, the data dir stays.
			sh.keep = true
			t.Logf("the shared %d-member stack is stopped; its data dir, with every component's log, is kept: %s", members, sh.dataDir)
		}
		sh.stop()
	})
	return s
}

// markBroken says the test leaves its stack unfit for the next one (a cluster unjoined, a
// process killed): the stack is stopped when the test ends. No-op on a stack of one's own.
func (s *stack) markBroken() {
	if s.shared != nil {
		s.shared.broken = true
	}
}

// stopSharedStacks stops every shared stack; TestMain calls it once the tests are done.
func stopSharedStacks() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, sh := range sharedStacks {
		sh.stop()
	}
	sharedStacks = nil
}

func (sh *sharedStack) stop() {
	cmd := exec.Command(flotillaBin, "down", "--data-dir", sh.dataDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the shared stack in %s: %v\n%s", sh.dataDir, err, out)
	}
	for deadline := time.Now().Add(time.Minute); len(processesOf(sh.dataDir)) > 0 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
	}
	if p := processesOf(sh.dataDir); len(p) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: processes of the shared stack in %s still run:\n%s\n", sh.dataDir, strings.Join(p, "\n"))
		return
	}
	if !sh.keep {
		_ = os.RemoveAll(sh.dataDir)
	}
}

func (sh *sharedStack) clusters() []string {
	out := []string{""}
	for i := 1; i <= sh.members; i++ {
		out = append(out, fmt.Sprintf("member%d", i))
	}
	return out
}

func clusterName(cluster string) string {
	if cluster == "" {
		return "the control plane"
	}
	return cluster
}

// resetTimeout bounds one reset: deleting a test's objects and waiting for the members to
// follow.
const resetTimeout = 2 * time.Minute

// reset deletes what the last test left, first in the control plane (so that Flotilla
// removes its copies from the members, as a user's delete would), then whatever remains in
// the members, and waits until every cluster holds only its baseline again.
func (sh *sharedStack) reset() error {
	deadline := time.Now().Add(resetTimeout)
	for _, cluster := range sh.clusters() {
		for {
			left, err := sh.leftovers(cluster)
			if err != nil {
				return err
			}
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				names := make([]string, 0, len(left))
				for _, o := range left {
					names = append(names, o.String())
				}
				sort.Strings(names)
				return fmt.Errorf("%s still holds %s", clusterName(cluster), strings.Join(names, ", "))
			}
			for _, o := range left {
				if o.deletable {
					_ = o.delete()
				}
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

// leftovers are the objects of a cluster that were not there when the stack started, among
// the resources a test leaves: everything listable outside the system namespaces, plus
// namespaces, custom resource definitions and cluster-scoped Karmada objects. Bindings and
// Works count as leftovers (Flotilla deletes them) but are not deleted by hand.
func (sh *sharedStack) leftovers(cluster string) ([]object, error) {
	objs, err := sh.list(cluster)
	if err != nil {
		return nil, err
	}
	var left []object
	for _, o := range objs {
		if !sh.baseline[cluster][o.uid] {
			left = append(left, o)
		}
	}
	return left, nil
}

// object is one object a reset may delete.
type object struct {
	client    dynamic.ResourceInterface
	resource  schema.GroupVersionResource
	namespace string
	name      string
	uid       types.UID
	deletable bool // not owned, and not written only by Flotilla's controllers
}

func (o object) String() string {
	if o.namespace == "" {
		return o.resource.Resource + "/" + o.name
	}
	return o.resource.Resource + "/" + o.namespace + "/" + o.name
}

func (o object) delete() error {
	bg := metav1.DeletePropagationBackground
	err := o.client.Delete(context.Background(), o.name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// systemNamespaces hold what the stack runs on; a reset leaves them alone.
func systemNamespace(ns string) bool {
	switch ns {
	case "kube-system", "kube-public", "kube-node-lease", "karmada-system", "karmada-cluster":
		return true
	}
	return strings.HasPrefix(ns, "karmada-es-")
}

// skippedResources change on their own (events, leases, endpoints, the service accounts a
// namespace is given) or belong to the stack itself (clusters, nodes).
var skippedResources = map[string]bool{
	"events": true, "leases": true, "endpoints": true, "controllerrevisions": true,
	"clusters": true, "nodes": true, "componentstatuses": true, "serviceaccounts": true,
	"certificatesigningrequests": true,
}

// controllerWritten are the kinds only Flotilla's controllers write: a reset waits for
// them to go but does not delete them.
var controllerWritten = map[string]bool{
	"resourcebindings": true, "clusterresourcebindings": true, "works": true,
}

func (sh *sharedStack) list(cluster string) ([]object, error) {
	cfg, err := (&stack{dataDir: sh.dataDir}).restConfig(cluster)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := disco.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []object
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if skippedResources[r.Name] || strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "delete") {
				continue
			}
			karmada := strings.HasSuffix(gv.Group, "karmada.io")
			if !r.Namespaced && r.Name != "namespaces" && r.Name != "customresourcedefinitions" && !karmada {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("listing %s: %w", gvr, err)
			}
			for _, it := range items.Items {
				ns := it.GetNamespace()
				if r.Name == "namespaces" && systemNamespace(it.GetName()) || ns != "" && systemNamespace(ns) && !controllerWritten[r.Name] {
					continue
				}
				// What a Cluster owns (unifiedAuth's impersonator Works, its
				// ClusterProfile) lives as long as the cluster, and may be
				// written after the baseline was taken: never a leftover.
				if ownedByCluster(it.GetOwnerReferences()) {
					continue
				}
				client := dynamic.ResourceInterface(dyn.Resource(gvr))
				if ns != "" {
					client = dyn.Resource(gvr).Namespace(ns)
				}
				out = append(out, object{
					client: client, resource: gvr, namespace: ns, name: it.GetName(), uid: it.GetUID(),
					deletable: len(it.GetOwnerReferences()) == 0 && !controllerWritten[r.Name],
				})
			}
		}
	}
	return out, nil
}

func ownedByCluster(refs []metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.Kind == "Cluster" && strings.HasPrefix(r.APIVersion, "cluster.karmada.io/") {
			return true
		}
	}
	return false
}

func hasVerbs(have metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// processesOf lists live processes whose command line mentions dataDir: every component of
// a stack gets paths under its data dir.
func processesOf(dataDir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dataDir)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie awaiting its reaper is not running
		}
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " ")[:min(120, len(cmdline))])
	}
	return found
}
