package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

// BenchmarkDashboard measures the dashboard (#47's figures) on the stack's three members:
// the first page with 1,000 templates (the server's answer over HTTP, and ready in a headless
// Chromium when one is installed), how soon a change in a member shows on an open page
// (Chromium), and the dashboard's memory with 10,000 templates.
func BenchmarkDashboard(b *testing.B) {
	h := startHarness(b)
	ctx := context.Background()
	base := fmt.Sprintf("https://127.0.0.1:%d", h.ports()[dashboardPortKey])
	kc := filepath.Join(h.dataDir, "karmada.config")
	out, err := exec.Command(os.Getenv("FLOTILLA_BIN"), "dashboard", "token", "--kubeconfig", kc).Output()
	if err != nil {
		b.Fatalf("flotilla dashboard token: %v", err)
	}
	token := strings.TrimSpace(string(out))
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the stack's own CA; only the timing matters here
	if resp, err := hc.PostForm(base+"/login", url.Values{"token": {token}}); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("sign in: %v %v", resp, err)
	}

	// The template whose story the browser follows: one replica (it runs on kwok unless
	// the members are bare).
	story := deployment("dash-story")
	story.Spec.Replicas = ptr.To[int32](1)
	if _, err := h.cp.AppsV1().Deployments(ns).Create(ctx, story, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	zero := func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) }
	start := time.Now()
	h.createDeployments(ns, "dash", 1000, zero)
	names := []string{"dash-story"}
	for i := range 1000 {
		names = append(names, fmt.Sprintf("dash-%04d", i))
	}
	_, _ = h.latencies(names, 10*time.Minute)
	b.Logf("1,000 templates in 3 members in %s", time.Since(start).Round(100*time.Millisecond))
	b.Logf("the stack settled (status reports written) in %s more", h.settle())

	var rows []string
	page := func(path string) (time.Duration, int) {
		t0 := time.Now()
		resp, err := hc.Get(base + path)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %s", path, resp.Status)
		}
		return time.Since(t0), int(n)
	}
	timePage := func(label, path string, n int) {
		var ds []time.Duration
		size := 0
		for range n {
			d, s := page(path)
			ds, size = append(ds, d), s
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d KiB |", label, ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), size/1024))
		b.ReportMetric(float64(ds[len(ds)/2].Milliseconds()), "ms/"+strings.ReplaceAll(label, " ", "-"))
	}
	timePage("workloads, 1,000 templates", "/workloads", 10)
	timePage("fleet", "/fleet", 10)
	timePage("a template's story", "/story?apiVersion=apps/v1&kind=Deployment&namespace=bench&name=dash-story", 10)
	timePage("policies, 1,000 claims", "/policies", 5)

	if browser := testproc.Chromium(); browser != "" {
		rows = append(rows, h.dashboardInBrowser(browser, base, token)...)
	} else {
		rows = append(rows, "| in Chromium | skipped: no Chromium installed | | |")
	}

	// 10,000 templates: memory, and the page the filters narrow.
	start = time.Now()
	h.createDeployments(ns, "dash10k", 9000, zero)
	more := make([]string, 0, 9000)
	for i := range 9000 {
		more = append(more, fmt.Sprintf("dash10k-%04d", i))
	}
	_, _ = h.latencies(more, 30*time.Minute)
	b.Logf("9,000 more templates in 3 members in %s", time.Since(start).Round(time.Second))
	b.Logf("the stack settled in %s more", h.settle())
	timePage("workloads, 10,000 templates (500 drawn)", "/workloads", 5)
	timePage("workloads, 10,000 templates, filtered to Unhealthy", "/workloads?kind=Deployment&health=Unhealthy", 5)
	proc := h.procOf("dashboard")
	rss, peak := rssMiB(proc), peakMiB(proc)
	rows = append(rows, fmt.Sprintf("| dashboard memory, 10,000 templates | RSS %.0f MiB | peak %.0f MiB | |", rss, peak))
	b.ReportMetric(rss, "MiB-dashboard-rss-10k")

	fmt.Printf("\n| measure | p50 | p99 (max) | size |\n|---|---|---|---|\n%s\n", strings.Join(rows, "\n"))
}

const dashboardPortKey = "flotilla/dashboard"

// settle waits (two minutes at most) until the controller manager and the control plane's
// API server together use under a fifth of a core over two seconds: the copies have arrived,
// but their status reports are still being aggregated for a while, and a page timed then
// measures that load. It returns how long it waited.
func (h *harness) settle() time.Duration {
	start := time.Now()
	cpu := func() float64 { return cpuSeconds(h.controllerManagerProc()) + cpuSeconds(h.procOf("--control-plane")) }
	for time.Since(start) < 2*time.Minute {
		before := cpu()
		time.Sleep(2 * time.Second)
		if cpu()-before < 0.4 {
			break
		}
	}
	return time.Since(start).Round(time.Second)
}

// peakMiB is a process's peak resident memory (VmHWM), in MiB.
func peakMiB(proc string) float64 {
	status, _ := os.ReadFile(filepath.Join(proc, "status"))
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			_, _ = fmt.Sscan(strings.Fields(line)[1], &kb)
			return kb / 1024
		}
	}
	return 0
}

// dashboardInBrowser times, in headless Chromium, the workloads page until its matrix is
// drawn, and a change in member1 (the story template's status there) until the open
// story page shows it without a reload.
func (h *harness) dashboardInBrowser(browser, base, token string) []string {
	b := h.b
	ctx := testproc.Browser(b, browser)
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		if err := chromedp.Do(ctx, actions...); err != nil {
			b.Fatal(err)
		}
	}
	until := func(js string, timeout time.Duration) time.Time {
		deadline := time.Now().Add(timeout)
		for {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+js+")"))
			if err == nil && v {
				return time.Now()
			}
			if time.Now().After(deadline) {
				b.Fatalf("timed out waiting for %s", js)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	do(chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("#signin")))
	until(`location.pathname === '/fleet' && document.readyState === 'complete'`, 30*time.Second)

	var first []time.Duration
	for range 5 {
		t0 := time.Now()
		do(chromedp.Navigate(base + "/workloads"))
		first = append(first, until(`document.querySelectorAll('tr[data-template]').length >= 500`, time.Minute).Sub(t0))
	}
	sort.Slice(first, func(i, j int) bool { return first[i] < first[j] })

	do(chromedp.Navigate(base + "/story?apiVersion=apps/v1&kind=Deployment&namespace=bench&name=dash-story"))
	until(`document.querySelector('#members tr[data-cluster="member1"]') !== null`, time.Minute)
	var seen []time.Duration
	m1 := h.members[0].AppsV1().Deployments(ns)
	for i := range 10 {
		var changed time.Time
		var want string
		if bare {
			// A bare member runs no controllers: its Deployment's status is set by hand.
			d, err := m1.Get(context.Background(), "dash-story", metav1.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			d.Status.ReadyReplicas, d.Status.Replicas = int32(100+i), int32(100+i)
			changed = time.Now()
			if _, err := m1.UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
				b.Fatal(err)
			}
			want = fmt.Sprintf("readyReplicas=%d", 100+i)
		} else {
			// Scale the template; time from member1's Deployment reporting the new ready
			// count (kwok runs the pods) to the page showing it.
			target := int32(2 + i%2)
			if _, err := h.cp.AppsV1().Deployments(ns).Patch(context.Background(), "dash-story", "application/merge-patch+json",
				fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, target), metav1.PatchOptions{}); err != nil {
				b.Fatal(err)
			}
			h.waitFor("member1 reporting the new replicas", time.Minute, func() bool {
				d, err := m1.Get(context.Background(), "dash-story", metav1.GetOptions{})
				return err == nil && d.Status.ReadyReplicas == target && d.Status.Replicas == target
			})
			changed = time.Now()
			want = fmt.Sprintf("readyReplicas=%d", target)
		}
		at := until(`document.querySelector('#members tr[data-cluster="member1"] code')?.textContent.split(' ').includes('`+want+`')`, time.Minute)
		seen = append(seen, at.Sub(changed))
		time.Sleep(300 * time.Millisecond)
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i] < seen[j] })
	b.ReportMetric(float64(first[len(first)/2].Milliseconds()), "ms/first-page-browser")
	b.ReportMetric(float64(seen[len(seen)/2].Milliseconds()), "ms/member-change-to-browser")
	return []string{
		fmt.Sprintf("| workloads, 1,000 templates, ready in Chromium | %s | %s | |", first[len(first)/2].Round(time.Millisecond), first[len(first)-1].Round(time.Millisecond)),
		fmt.Sprintf("| a change in member1 shown on the open story page (Chromium) | %s | %s | |", seen[len(seen)/2].Round(time.Millisecond), seen[len(seen)-1].Round(time.Millisecond)),
	}
}
