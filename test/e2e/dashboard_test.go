package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

// chromium finds a Chromium or Chrome binary. Without one the browser
// test is skipped, except in CI (CI=true), where .ci/run installs Debian's
// chromium and a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := testproc.Chromium(); p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found: .ci/run installs Debian's chromium package; set FLOTILLA_CHROMIUM to another binary")
	}
	t.Skip("no Chromium found (apt-get install chromium, or set FLOTILLA_CHROMIUM): the dashboard's browser test is skipped")
	return ""
}

// artifactsDir is where the browser test keeps its screenshots:
// $FLOTILLA_ARTIFACTS/dashboard, else bin/artifacts/dashboard in the repository.
func artifactsDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("FLOTILLA_ARTIFACTS")
	if base == "" {
		base = filepath.Join("..", "..", "bin", "artifacts")
	}
	dir := filepath.Join(base, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardInABrowser uses the dashboard the way a person does, in a
// real headless Chromium: a wrong token gets the sign-in page with a
// message; the administrator signs in, sees three Ready clusters, opens a
// Deployment's story, watches a replica change appear without reloading,
// cordons a cluster after confirming the object it writes and sees the
// card change; a user with RBAC on one namespace sees only that namespace
// and gets a clear refusal for a cordon; a deleted template's page says it
// is gone. Every page is kept as a screenshot (artifactsDir).
func TestDashboardInABrowser(t *testing.T) {
	browser := chromium(t)
	s := sharedStackOf(t, 3)
	shots := artifactsDir(t)
	url := fmt.Sprintf("https://127.0.0.1:%d", s.ports()["flotilla/dashboard"])
	kc := filepath.Join(s.dataDir, "karmada.config")

	s.mustApply(t, "", `apiVersion: v1
kind: Namespace
metadata: {name: dash-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: dash-b}
---
`+deploymentYAML("dash-a", "web", 2, "nginx")+`---
`+deploymentYAML("dash-b", "other", 1, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: dash-a}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: other, namespace: dash-b}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: other}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
# A user with RBAC on dash-a only, who may also read the clusters.
apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer, namespace: dash-a}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-all, namespace: dash-a}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer, namespace: dash-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-all}
subjects: [{kind: ServiceAccount, name: viewer, namespace: dash-a}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: dash-cluster-reader}
rules: [{apiGroups: [cluster.karmada.io], resources: [clusters], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dash-cluster-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: dash-cluster-reader}
subjects: [{kind: ServiceAccount, name: viewer, namespace: dash-a}]
`)
	t.Cleanup(func() {
		_, _ = s.flotillaCmd("uncordon", "member1", "--kubeconfig", kc)
		_, _ = s.flotillaCmd("uncordon", "member2", "--kubeconfig", kc)
		_ = exec.Command("kubectl", "--kubeconfig", kc, "delete", "clusterrolebinding,clusterrole", "dash-cluster-reader", "--ignore-not-found").Run()
	})
	s.waitFor(t, "member1=2 member2=2 member3=2", "", "rb", "web-deployment", "-n", "dash-a", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
	adminToken := strings.TrimSpace(s.flotilla("dashboard", "token", "--kubeconfig", kc))
	viewerToken := strings.TrimSpace(s.flotilla("dashboard", "token", "--kubeconfig", kc, "--service-account", "dash-a/viewer", "--duration", "1h"))
	// The token command prints the token on stdout and a note on stderr; s.flotilla joins both.
	adminToken, viewerToken = firstLine(adminToken), firstLine(viewerToken)

	ctx, cancelTimeout := context.WithTimeout(testproc.Browser(t, browser), 4*time.Minute)
	defer cancelTimeout()

	failed := func(what string, err error) {
		t.Helper()
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("%s: %v\npage:\n%s", what, err, html)
	}
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			failed(what, err)
		}
	}
	eval := func(what, js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		if err != nil {
			failed(what, err)
		}
		return v
	}
	// shot keeps the page as a screenshot. Headless Chromium now and then
	// reports a page it is laying out again (a live redraw) as 0 wide
	// ("Cannot take screenshot with 0 width"): that is tried again for a
	// few seconds before it fails the test.
	shot := func(name string) {
		t.Helper()
		var png []byte
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			failed("screenshot "+name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// until waits for a JavaScript condition to hold; an evaluation that fails while the
	// page navigates (its context gone) is tried again.
	until := func(what, js string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+js+")"))
			if err == nil && v {
				return
			}
			if time.Now().After(deadline) {
				if err == nil {
					err = fmt.Errorf("still false after 30s")
				}
				failed(what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	signIn := func(token string) {
		t.Helper()
		run("sign in", chromedp.Navigate(url+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#signin")))
		until("the sign-in answered", `document.readyState === 'complete' && (location.pathname !== '/login' || document.querySelector('#signin-error') !== null)`)
	}

	// A wrong token: the sign-in page again, with what to do.
	signIn("not-a-token")
	until("the sign-in page says the token was refused", `document.querySelector('#signin-error')?.textContent.includes('did not accept this token')`)
	shot("01-sign-in-refused")

	// The administrator: three Ready clusters.
	signIn(adminToken)
	until("three Ready clusters", `document.querySelectorAll('article.card .pill.true').length === 3`)
	shot("02-fleet")

	run("workloads", chromedp.Navigate(url+"/workloads"))
	until("the workloads matrix shows web on three clusters", `document.querySelectorAll('tr[data-template="Deployment/dash-a/web"] td.c.ok').length === 3`)
	shot("03-workloads")

	// The story, then a replica change arriving without a reload.
	run("open web's story", chromedp.Click(chromedp.CSS(`tr[data-template="Deployment/dash-a/web"] a`)))
	until("the story shows 2 replicas and the timeline", `document.querySelector('#replicas')?.textContent.includes('2 replicas') && document.querySelectorAll('.timeline li').length > 0`)
	shot("04-story")
	eval("mark the page", `window.__notReloaded = true`)
	start := time.Now()
	s.kubectl("", "scale", "deployment", "web", "-n", "dash-a", "--replicas", "3")
	until("the story shows 3 replicas", `document.querySelector('#replicas')?.textContent.includes('3 replicas')`)
	t.Logf("the replica change reached the page in %s", time.Since(start).Round(10*time.Millisecond))
	if kept := eval("the page was not reloaded", `window.__notReloaded === true`); kept != true {
		t.Error("the page reloaded to show the change; it should redraw in place")
	}
	until("member status reports 3 ready replicas in a member", `document.querySelector('#members')?.textContent.includes('readyReplicas=3')`)
	shot("05-story-scaled")

	// Cordon member1: a dry run shown for confirmation, then the card changes.
	run("fleet", chromedp.Navigate(url+"/fleet"))
	until("fleet drawn", `document.querySelectorAll('section:not(.trouble) article.card').length === 3`)
	eval("mark the page", `window.__notReloaded = true`)
	run("cordon member1", chromedp.Click(chromedp.CSS(`button[data-action="cordon"][data-cluster="member1"]`)))
	until("the confirmation shows the Cluster it writes", `document.querySelector('#confirm').open && document.querySelector('#confirm-object').textContent.includes('cluster.karmada.io/unschedulable')`)
	shot("06-cordon-confirm")
	run("confirm", chromedp.Click(chromedp.CSS("#confirm-go")))
	until("member1's card says cordoned", `document.querySelector('article.card[data-cluster="member1"] .taints')?.textContent.includes('cluster.karmada.io/unschedulable:NoSchedule') && window.__notReloaded === true`)
	shot("07-fleet-cordoned")
	if taints := s.kubectl("", "get", "cluster", "member1", "-o", "jsonpath={.spec.taints[*].key}"); !strings.Contains(taints, "cluster.karmada.io/unschedulable") {
		t.Errorf("member1's taints after the cordon: %q", taints)
	}

	// The other pages draw.
	for i, p := range []string{"policies", "autoscaling", "operations", "metrics"} {
		run(p, chromedp.Navigate(url+"/"+p))
		until(p+" drawn", `document.querySelector('main h1') !== null && !document.querySelector('.error.banner')`)
		shot(fmt.Sprintf("%02d-%s", 8+i, p))
	}

	// A user with RBAC on dash-a: only dash-a, and a refusal for a cordon.
	run("sign out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	until("back on the sign-in page", `location.pathname === '/login' && document.querySelector('#token') !== null`)
	signIn(viewerToken)
	run("workloads as the viewer", chromedp.Navigate(url+"/workloads"))
	until("the viewer sees web and the namespaces note", `document.querySelector('tr[data-template="Deployment/dash-a/web"]') !== null && document.querySelector('.notice')?.textContent.includes('dash-a')`)
	if others := eval("count other namespaces", `document.querySelectorAll('tr[data-template]:not([data-template*="/dash-a/"])').length`); others != float64(0) {
		t.Errorf("the viewer with RBAC on dash-a sees %d templates of other namespaces", others)
	}
	shot("12-workloads-one-namespace")
	run("fleet as the viewer", chromedp.Navigate(url+"/fleet"))
	until("fleet drawn", `document.querySelectorAll('section:not(.trouble) article.card').length === 3`)
	run("cordon member2 as the viewer", chromedp.Click(chromedp.CSS(`button[data-action="cordon"][data-cluster="member2"]`)))
	until("the refusal names RBAC", `document.querySelector('#confirm').open && document.querySelector('#confirm-error').textContent.includes('Refused: RBAC does not let system:serviceaccount:dash-a:viewer')`)
	shot("13-cordon-refused")
	if taints := s.kubectl("", "get", "cluster", "member2", "-o", "jsonpath={.spec.taints[*].key}"); strings.Contains(taints, "unschedulable") {
		t.Errorf("the viewer's refused cordon changed member2: %q", taints)
	}

	// A deleted template's page says it is gone.
	s.kubectl("", "delete", "deployment", "web", "-n", "dash-a")
	run("the deleted template's page", chromedp.Navigate(url+"/story?apiVersion=apps/v1&kind=Deployment&namespace=dash-a&name=web"))
	until("the page says it is gone", `document.querySelector('#gone')?.textContent.includes('is not on the control plane')`)
	shot("14-story-gone")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
