package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/app/dashboard"
	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/member/join"
)

// dashboardSite is an in-process dashboard over the stack's control plane,
// served over TLS that asks for client certificates of the stack's CA.
type dashboardSite struct {
	t   *testing.T
	srv *httptest.Server
}

func newDashboardSite(t *testing.T) *dashboardSite {
	t.Helper()
	pki := localstack.PKIPaths(theStack.dataDir)
	s, err := dashboard.New(theStack.controlPlaneConfig, dashboard.Options{ClientCAFile: pki.CACert,
		SessionTTL: time.Hour, ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	ca, err := os.ReadFile(pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	srv.TLS = &tls.Config{ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &dashboardSite{t: t, srv: srv}
}

// browser is a client with its own cookies (one signed-in user).
func (d *dashboardSite) browser(certs ...tls.Certificate) *http.Client {
	jar, _ := cookiejar.New(nil)
	c := d.srv.Client()
	tr := c.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = certs
	return &http.Client{Transport: tr, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (d *dashboardSite) get(c *http.Client, path string) (int, string) {
	d.t.Helper()
	resp, err := c.Get(d.srv.URL + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	return resp.StatusCode, string(body)
}

func (d *dashboardSite) signIn(c *http.Client, token string) (int, string) {
	d.t.Helper()
	resp, err := c.PostForm(d.srv.URL+"/login", url.Values{"token": {token}, "next": {"/workloads"}})
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusSeeOther {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	return resp.StatusCode, string(body)
}

func (d *dashboardSite) act(c *http.Client, req map[string]any) (int, map[string]any) {
	d.t.Helper()
	body, _ := json.Marshal(req)
	r, _ := http.NewRequest(http.MethodPost, d.srv.URL+"/actions", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Flotilla-Dashboard", "action")
	resp, err := c.Do(r)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestDashboard drives the dashboard's handlers against the stack's real
// control plane: sign-in with good and bad tokens and with a client
// certificate, the workloads matrix as an administrator and as a user with
// RBAC on one namespace, a template's story and a deleted one, actions as a
// dry run, for real and refused, and the live stream.
func TestDashboard(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	ctx := context.Background()
	cp := theStack.controlPlane
	kc := kubernetes.NewForConfigOrDie(theStack.controlPlaneConfig)
	for _, ns := range []string{"dash-a", "dash-b"} {
		if err := cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cp.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
		if err := cp.Create(ctx, dep); err != nil {
			t.Fatal(err)
		}
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-deployment"},
			Spec: workv1alpha2.ResourceBindingSpec{Replicas: 2,
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}}}
		if err := cp.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}}}
		if err := cp.Status().Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	adminToken, _, err := dashboard.Token(ctx, kc, dashboard.AdminNamespace, dashboard.AdminServiceAccount, time.Hour, true)
	if err != nil {
		t.Fatal(err)
	}
	// A viewer: every kind in dash-a, and the Clusters.
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-a", Name: "viewer"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-a", Name: "read-all"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-a", Name: "viewer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-all"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "dash-a", Name: "viewer"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dash-cluster-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dash-cluster-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "dash-cluster-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "dash-a", Name: "viewer"}}},
	} {
		if err := cp.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		if obj.GetNamespace() == "" {
			t.Cleanup(func() { _ = cp.Delete(ctx, obj) })
		}
	}
	viewerToken, _, err := dashboard.Token(ctx, kc, "dash-a", "viewer", time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}

	d := newDashboardSite(t)

	t.Run("no anonymous access", func(t *testing.T) {
		c := d.browser()
		if code, loc := d.get(c, "/workloads?namespace=dash-a"); code != http.StatusFound || !strings.HasPrefix(loc, "/login?next=%2Fworkloads") {
			t.Errorf("an anonymous page: %d %q; want a redirect to the sign-in page that comes back", code, loc)
		}
		if code, _ := d.act(c, map[string]any{"action": "cordon", "cluster": "member1"}); code != http.StatusUnauthorized {
			t.Errorf("an anonymous action: %d; want 401", code)
		}
		u, _ := url.Parse(d.srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "flotilla-dashboard-session", Value: "stale", Path: "/"}})
		if code, loc := d.get(c, "/fleet"); code != http.StatusFound || !strings.HasSuffix(loc, "&expired=1") {
			t.Errorf("a session the dashboard does not hold: %d %q; want the sign-in page saying it expired", code, loc)
		}
		if _, body := d.get(c, "/login?expired=1"); !strings.Contains(body, "Your sign-in expired") {
			t.Errorf("the sign-in page after an expired session:\n%s", body)
		}
	})

	t.Run("a wrong token gets the sign-in page with a message", func(t *testing.T) {
		code, body := d.signIn(d.browser(), "not-a-token")
		if code != http.StatusUnauthorized || !strings.Contains(body, "did not accept this token") || strings.Contains(body, "goroutine") {
			t.Errorf("a wrong token: %d\n%s", code, body)
		}
		code, body = d.signIn(d.browser(), "")
		if code != http.StatusUnauthorized || !strings.Contains(body, "paste a bearer token") {
			t.Errorf("no token: %d\n%s", code, body)
		}
	})

	admin := d.browser()
	if code, loc := d.signIn(admin, adminToken); code != http.StatusSeeOther || loc != "/workloads" {
		t.Fatalf("the administrator's sign-in: %d %q", code, loc)
	}
	viewer := d.browser()
	if code, _ := d.signIn(viewer, viewerToken); code != http.StatusSeeOther {
		t.Fatalf("the viewer's sign-in: %d", code)
	}

	t.Run("fleet", func(t *testing.T) {
		code, body := d.get(admin, "/fleet")
		if code != http.StatusOK || !strings.Contains(body, `data-cluster="member1"`) || !strings.Contains(body, `data-cluster="member2"`) {
			t.Errorf("fleet: %d\n%s", code, body)
		}
	})

	t.Run("workloads: the administrator sees every namespace, the viewer one", func(t *testing.T) {
		_, body := d.get(admin, "/workloads?fragment=1")
		for _, want := range []string{`data-template="Deployment/dash-a/web"`, `data-template="Deployment/dash-b/web"`, `class="c ok"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the administrator's workloads lack %s:\n%s", want, body)
			}
		}
		_, body = d.get(viewer, "/workloads?fragment=1")
		if !strings.Contains(body, `data-template="Deployment/dash-a/web"`) || strings.Contains(body, "dash-b") ||
			!strings.Contains(body, "Showing the namespaces you may read: dash-a") {
			t.Errorf("the viewer's workloads:\n%s", body)
		}
		_, body = d.get(admin, "/workloads?fragment=1&namespace=dash-b")
		if strings.Contains(body, `Deployment/dash-a/web`) || !strings.Contains(body, `Deployment/dash-b/web`) {
			t.Errorf("the namespace filter:\n%s", body)
		}
	})

	t.Run("a template's story, and a deleted one", func(t *testing.T) {
		code, body := d.get(viewer, "/story?apiVersion=apps/v1&kind=Deployment&namespace=dash-a&name=web")
		if code != http.StatusOK || !strings.Contains(body, "ResourceBinding dash-a/web-deployment") || !strings.Contains(body, "readyReplicas=2") {
			t.Errorf("the story: %d\n%s", code, body)
		}
		code, body = d.get(viewer, "/story?apiVersion=apps/v1&kind=Deployment&namespace=dash-a&name=gone")
		if code != http.StatusNotFound || !strings.Contains(body, "Deployment dash-a/gone is not on the control plane") {
			t.Errorf("a missing template: %d\n%s", code, body)
		}
		for _, bad := range []string{"/story", "/story?apiVersion=apps/v1&kind=Deployment&name=web"} {
			if code, body := d.get(viewer, bad); code != http.StatusBadRequest || !strings.Contains(body, "This address is not one the dashboard can draw") {
				t.Errorf("%s: %d\n%s", bad, code, body)
			}
		}
		if code, body := d.get(viewer, "/nowhere"); code != http.StatusNotFound || !strings.Contains(body, "Nothing here") {
			t.Errorf("an unknown page: %d\n%s", code, body)
		}
		code, body = d.get(viewer, "/story?apiVersion=apps/v1&kind=Deployment&namespace=dash-b&name=web")
		if code != http.StatusForbidden || !strings.Contains(body, "RBAC does not let system:serviceaccount:dash-a:viewer read") {
			t.Errorf("a template the viewer may not read: %d\n%s", code, body)
		}
	})

	t.Run("actions: a dry run, the write, a refusal", func(t *testing.T) {
		code, resp := d.act(admin, map[string]any{"action": "cordon", "cluster": "member2"})
		if code != http.StatusOK || !strings.Contains(resp["object"].(string), clusterv1alpha1.TaintClusterUnschedulable) {
			t.Fatalf("the cordon's dry run: %d %v", code, resp)
		}
		c := &clusterv1alpha1.Cluster{}
		if err := cp.Get(ctx, client.ObjectKey{Name: "member2"}, c); err != nil || len(c.Spec.Taints) != 0 {
			t.Fatalf("the dry run changed member2: %v %v", c.Spec.Taints, err)
		}
		if code, resp := d.act(admin, map[string]any{"action": "cordon", "cluster": "member2", "confirm": true}); code != http.StatusOK || resp["done"] != true {
			t.Fatalf("the cordon: %d %v", code, resp)
		}
		if err := cp.Get(ctx, client.ObjectKey{Name: "member2"}, c); err != nil || len(c.Spec.Taints) != 1 || c.Spec.Taints[0].Key != clusterv1alpha1.TaintClusterUnschedulable {
			t.Errorf("member2 after the cordon: %v %v", c.Spec.Taints, err)
		}
		if code, resp := d.act(admin, map[string]any{"action": "uncordon", "cluster": "member2", "confirm": true}); code != http.StatusOK {
			t.Errorf("the uncordon: %d %v", code, resp)
		}
		if err := cp.Get(ctx, client.ObjectKey{Name: "member2"}, c); err != nil || len(c.Spec.Taints) != 0 {
			t.Errorf("member2 after the uncordon: %v %v", c.Spec.Taints, err)
		}
		code, resp = d.act(viewer, map[string]any{"action": "cordon", "cluster": "member2", "confirm": true})
		if code != http.StatusForbidden || !strings.Contains(resp["error"].(string), "Refused: RBAC does not let system:serviceaccount:dash-a:viewer") {
			t.Errorf("the viewer's cordon: %d %v", code, resp)
		}
		code, resp = d.act(admin, map[string]any{"action": "taint", "cluster": "member2", "key": "gpu"})
		if code != http.StatusBadRequest || !strings.Contains(resp["error"].(string), "NoSchedule, PreferNoSchedule or NoExecute") {
			t.Errorf("a taint without an effect: %d %v", code, resp)
		}
		code, resp = d.act(admin, map[string]any{"action": "rebalance", "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "dash-a", "name": "web"})
		if code != http.StatusOK || !strings.Contains(resp["object"].(string), "kind: WorkloadRebalancer") {
			t.Errorf("the rebalance's dry run: %d %v", code, resp)
		}
		// Without the page's header, an action is refused (a form on another site cannot send it).
		r, _ := http.NewRequest(http.MethodPost, d.srv.URL+"/actions", strings.NewReader(`{"action":"cordon","cluster":"member2","confirm":true}`))
		if resp, err := admin.Do(r); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("an action without the dashboard's header: %v %v", resp, err)
		}
	})

	t.Run("a client certificate signs in without a token", func(t *testing.T) {
		pki := localstack.PKIPaths(theStack.dataDir)
		cert, err := tls.LoadX509KeyPair(pki.AdminCert, pki.AdminKey)
		if err != nil {
			t.Fatal(err)
		}
		code, body := d.get(d.browser(cert), "/fleet")
		if code != http.StatusOK || !strings.Contains(body, `data-cluster="member1"`) || !strings.Contains(body, "client certificate") {
			t.Errorf("fleet with the admin certificate: %d\n%s", code, body)
		}
	})

	t.Run("promote takes an object running in a member into the control plane", func(t *testing.T) {
		pki := localstack.PKIPaths(theStack.dataDir)
		cert, err := tls.LoadX509KeyPair(pki.AdminCert, pki.AdminKey)
		if err != nil {
			t.Fatal(err)
		}
		member := theStack.members["member1"]
		// What the unifiedAuth controller (not running here) would send: the member's
		// impersonator may impersonate, so the Cluster proxy acts as the caller there.
		for _, obj := range []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dash-impersonator"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users", "groups"}, Verbs: []string{"impersonate"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dash-impersonator"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "dash-impersonator"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: join.ClusterSecretNamespace, Name: join.ImpersonatorServiceAccount}}},
		} {
			if err := member.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = member.Delete(ctx, obj) })
		}
		if err := member.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dash-promote"}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = member.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dash-promote"}}) })
		if err := member.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-promote", Name: "settings"},
			Data: map[string]string{"mode": "fast"}}); err != nil {
			t.Fatal(err)
		}
		if err := cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dash-promote"}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cp.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dash-promote"}}) })
		root := d.browser(cert)
		req := map[string]any{"action": "promote", "cluster": "member1", "kind": "cm", "namespace": "dash-promote", "name": "settings"}
		code, resp := d.act(root, req)
		if code != http.StatusOK || !strings.Contains(resp["object"].(string), "kind: PropagationPolicy") || !strings.Contains(resp["object"].(string), "mode: fast") {
			t.Fatalf("the promote's dry run: %d %v", code, resp)
		}
		req["confirm"] = true
		if code, resp := d.act(root, req); code != http.StatusOK {
			t.Fatalf("the promote: %d %v", code, resp)
		}
		cm := &corev1.ConfigMap{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: "dash-promote", Name: "settings"}, cm); err != nil || cm.Data["mode"] != "fast" {
			t.Errorf("the promoted ConfigMap on the control plane: %v %v", cm.Data, err)
		}
		if code, resp := d.act(root, req); code != http.StatusBadRequest || !strings.Contains(resp["error"].(string), "already exists on the control plane") {
			t.Errorf("promoting it again: %d %v", code, resp)
		}
		req["name"] = "missing"
		if code, resp := d.act(root, req); code != http.StatusBadRequest || !strings.Contains(resp["error"].(string), "not found in cluster member1") {
			t.Errorf("promoting what the member lacks: %d %v", code, resp)
		}
	})

	t.Run("autoscaling and operations", func(t *testing.T) {
		for _, obj := range []client.Object{
			&autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-a", Name: "web"},
				Spec: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5,
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}},
			&autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "dash-a", Name: "mornings"},
				Spec: autoscalingv1alpha1.CronFederatedHPASpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "up", Schedule: "0 9 * * *", TargetReplicas: ptr.To[int32](3)}}}},
		} {
			if err := cp.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		_, body := d.get(viewer, "/autoscaling?fragment=1")
		for _, want := range []string{"dash-a/web</strong> scales Deployment web", "dash-a/mornings", "<code>0 9 * * *</code>", "replicas 3", "(in "} {
			if !strings.Contains(body, want) {
				t.Errorf("the autoscaling page lacks %q:\n%s", want, body)
			}
		}
		rb := &workv1alpha2.ResourceBinding{}
		if err := cp.Get(ctx, client.ObjectKey{Namespace: "dash-a", Name: "web-deployment"}, rb); err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member2", Reason: "TaintUntolerated",
			Producer: "taint-manager", CreationTimestamp: &now, GracePeriodSeconds: ptr.To[int32](600)}}
		if err := cp.Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
		_, body = d.get(viewer, "/operations?fragment=1")
		for _, want := range []string{"Deployment dash-a/web", "member2", "TaintUntolerated", "taint-manager", "grace period ends in"} {
			if !strings.Contains(body, want) {
				t.Errorf("the operations page lacks %q:\n%s", want, body)
			}
		}
	})

	t.Run("metrics need get on /metrics", func(t *testing.T) {
		_, body := d.get(viewer, "/metrics?fragment=1")
		if !strings.Contains(body, "get /metrics") {
			t.Errorf("the viewer's metrics page:\n%s", body)
		}
	})

	t.Run("the live stream reports a change", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/live?topics=clusters", nil)
		c := d.browser()
		c.Jar = admin.Jar
		c.Timeout = 0
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		resp, err := c.Do(req.WithContext(sctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q", ct)
		}
		got := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					got <- strings.TrimPrefix(sc.Text(), "data: ")
					return
				}
			}
		}()
		time.Sleep(200 * time.Millisecond) // subscribed before the change
		c2 := &clusterv1alpha1.Cluster{}
		if err := cp.Get(ctx, client.ObjectKey{Name: "member1"}, c2); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(c2.DeepCopy())
		if c2.Labels == nil {
			c2.Labels = map[string]string{}
		}
		c2.Labels["dashboard-test"] = time.Now().Format("150405.000")
		if err := cp.Patch(ctx, c2, patch); err != nil {
			t.Fatal(err)
		}
		select {
		case topic := <-got:
			if topic != "clusters" {
				t.Errorf("the stream reported %q; want clusters", topic)
			}
		case <-sctx.Done():
			t.Error("no change reported within 30s of a Cluster's change")
		}
	})
}
