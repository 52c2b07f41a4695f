package helmchart_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/test/helmchart"
)

const ns = helmchart.DefaultNamespace

// externalEtcd are the values of a control plane on an etcd cluster of one's own.
var externalEtcd = map[string]any{"etcd": map[string]any{"external": map[string]any{
	"endpoints":     []any{"https://etcd-a.example.com:2379", "https://etcd-b.example.com:2379"},
	"tlsSecretName": "my-etcd-client",
}}}

func chartDir(t *testing.T) string {
	t.Helper()
	dir, err := helmchart.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func render(t *testing.T, values map[string]any) *helmchart.Rendered {
	t.Helper()
	r, err := helmchart.Render(chartDir(t), ns, values)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLint runs helm lint's checks: no errors and no warnings, with the
// default values, with an external etcd and without the optional servers.
func TestLint(t *testing.T) {
	for name, values := range map[string]map[string]any{"default values": nil, "external etcd": externalEtcd, "no webhook, metrics adapter or search": {
		"webhook": map[string]any{"enabled": false}, "metricsAdapter": map[string]any{"enabled": false}, "search": map[string]any{"enabled": false},
	}} {
		t.Run(name, func(t *testing.T) {
			for _, m := range helmchart.Lint(chartDir(t), ns, values) {
				t.Errorf("helm lint: %s", m)
			}
		})
	}
}

// byKind indexes a render's objects by kind and name.
func byKind(r *helmchart.Rendered) map[string]map[string]*unstructured.Unstructured {
	out := map[string]map[string]*unstructured.Unstructured{}
	for _, o := range r.Objects {
		if out[o.GetKind()] == nil {
			out[o.GetKind()] = map[string]*unstructured.Unstructured{}
		}
		out[o.GetKind()][o.GetName()] = o
	}
	return out
}

func names[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func convert[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
	return out
}

// pods returns the pod template of every workload: Deployments,
// StatefulSets and Jobs, by "Kind/name".
func pods(t *testing.T, objs map[string]map[string]*unstructured.Unstructured) map[string]corev1.PodTemplateSpec {
	out := map[string]corev1.PodTemplateSpec{}
	for _, o := range objs["Deployment"] {
		out["Deployment/"+o.GetName()] = convert[appsv1.Deployment](t, o).Spec.Template
	}
	for _, o := range objs["StatefulSet"] {
		out["StatefulSet/"+o.GetName()] = convert[appsv1.StatefulSet](t, o).Spec.Template
	}
	for _, o := range objs["Job"] {
		out["Job/"+o.GetName()] = convert[batchv1.Job](t, o).Spec.Template
	}
	return out
}

func args(t *testing.T, objs map[string]map[string]*unstructured.Unstructured, deployment string) []string {
	t.Helper()
	o := objs["Deployment"][deployment]
	if o == nil {
		o = objs["Job"][deployment]
	}
	if o == nil {
		t.Fatalf("no Deployment or Job %s", deployment)
	}
	spec, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	c := spec[0].(map[string]any)
	var out []string
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func flagValue(args []string, flag string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

// fileSources follows the files the pod's first container is given in flags
// to the Secrets they are mounted from: flag to "secret/key", for the flags
// that are set. A file outside every Secret mount is reported as an error.
func fileSources(t *testing.T, pod corev1.PodTemplateSpec, flags ...string) map[string]string {
	t.Helper()
	c := pod.Spec.Containers[0]
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	out := map[string]string{}
	for _, flag := range flags {
		path, ok := flagValue(c.Args, flag)
		if !ok {
			continue
		}
		out[flag] = ""
		for _, m := range c.VolumeMounts {
			file, ok := strings.CutPrefix(path, m.MountPath+"/")
			if !ok || volumes[m.Name].Secret == nil {
				continue
			}
			secret := volumes[m.Name].Secret
			key := file
			if len(secret.Items) > 0 {
				key = ""
				for _, item := range secret.Items {
					if item.Path == file {
						key = item.Key
					}
				}
			}
			if key != "" {
				out[flag] = secret.SecretName + "/" + key
			}
		}
		if out[flag] == "" {
			t.Errorf("container %s: %s=%s is in no mounted Secret", c.Name, flag, path)
		}
	}
	return out
}

// TestRender renders the chart as `helm template` does and checks what it
// deploys: the components and their replicas, the etcd StatefulSet only
// without an external etcd, the disruption budgets, the Services, Secrets
// and the install hook, and how every container runs.
func TestRender(t *testing.T) {
	deployments := []string{"flotilla-apiserver", "flotilla-controller-manager", "flotilla-kube-controller-manager",
		"flotilla-metrics-adapter", "flotilla-scheduler", "flotilla-search", "flotilla-webhook"}
	secrets := []string{"flotilla-apiserver-certs", "flotilla-ca", "flotilla-controller-manager-kubeconfig",
		"flotilla-kube-controller-manager-certs", "flotilla-kubeconfig", "flotilla-metrics-adapter-certs",
		"flotilla-metrics-adapter-kubeconfig", "flotilla-scheduler-kubeconfig", "flotilla-search-certs", "flotilla-search-kubeconfig",
		"flotilla-webhook-certs", "flotilla-webhook-kubeconfig"}
	for _, tc := range []struct {
		name     string
		values   map[string]any
		etcd     bool
		services []string
		secrets  []string
	}{
		{name: "default values run a 3-member etcd", values: nil, etcd: true,
			services: []string{"flotilla-apiserver", "flotilla-etcd", "flotilla-metrics-adapter", "flotilla-search", "flotilla-webhook"},
			// Search gets a client certificate of its own for the chart's etcd.
			secrets: slices.Sorted(slices.Values(append([]string{"flotilla-etcd-certs", "flotilla-search-etcd-client"}, secrets...)))},
		{name: "an external etcd runs none", values: externalEtcd,
			services: []string{"flotilla-apiserver", "flotilla-metrics-adapter", "flotilla-search", "flotilla-webhook"}, secrets: secrets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.values)
			objs := byKind(r)
			if diff := cmp.Diff(deployments, names(objs["Deployment"])); diff != "" {
				t.Errorf("Deployments (-want +got):\n%s", diff)
			}
			wantSTS := []string(nil)
			if tc.etcd {
				wantSTS = []string{"flotilla-etcd"}
			}
			if diff := cmp.Diff(wantSTS, names(objs["StatefulSet"])); diff != "" {
				t.Errorf("StatefulSets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.services, names(objs["Service"])); diff != "" {
				t.Errorf("Services (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.secrets, names(objs["Secret"])); diff != "" {
				t.Errorf("Secrets (-want +got):\n%s", diff)
			}

			// Every multi-replica component: two replicas by default, and
			// a budget that keeps one (etcd: a quorum).
			wantPDB := map[string]any{}
			for _, name := range deployments {
				d := convert[appsv1.Deployment](t, objs["Deployment"][name])
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
					t.Errorf("Deployment %s: replicas %v, want 2", name, d.Spec.Replicas)
				}
				wantPDB[name] = int64(1)
			}
			if tc.etcd {
				sts := convert[appsv1.StatefulSet](t, objs["StatefulSet"]["flotilla-etcd"])
				if *sts.Spec.Replicas != 3 || sts.Spec.ServiceName != "flotilla-etcd" || len(sts.Spec.VolumeClaimTemplates) != 1 {
					t.Errorf("etcd StatefulSet: %d replicas, service %q, %d claim templates; want 3, flotilla-etcd, 1",
						*sts.Spec.Replicas, sts.Spec.ServiceName, len(sts.Spec.VolumeClaimTemplates))
				}
				if svc := convert[corev1.Service](t, objs["Service"]["flotilla-etcd"]); svc.Spec.ClusterIP != corev1.ClusterIPNone {
					t.Errorf("the etcd Service is not headless: clusterIP %q", svc.Spec.ClusterIP)
				}
				wantPDB["flotilla-etcd"] = int64(2)
			}
			gotPDB := map[string]any{}
			for name, o := range objs["PodDisruptionBudget"] {
				gotPDB[name], _, _ = unstructured.NestedFieldNoCopy(o.Object, "spec", "minAvailable")
			}
			if diff := cmp.Diff(wantPDB, gotPDB); diff != "" {
				t.Errorf("PodDisruptionBudgets' minAvailable (-want +got):\n%s", diff)
			}

			// The install Job is a post-install and post-upgrade hook.
			job := objs["Job"]["flotilla-install"]
			if job == nil || job.GetAnnotations()["helm.sh/hook"] != "post-install,post-upgrade" {
				t.Errorf("want the Job flotilla-install as a post-install,post-upgrade hook, got %v", job)
			}

			for name, pod := range pods(t, objs) {
				checkPod(t, name, pod)
			}

			// Search keeps ResourceRegistries in the etcd the API server
			// uses, under the same prefix, with a client certificate of its
			// own for the chart's etcd and the external one's Secret else.
			want := "https://etcd-a.example.com:2379,https://etcd-b.example.com:2379"
			wantSearchEtcd := map[string]string{
				"--etcd-cafile": "my-etcd-client/ca.crt", "--etcd-certfile": "my-etcd-client/tls.crt", "--etcd-keyfile": "my-etcd-client/tls.key"}
			wantPrefix, wantPrefixSet := "/registry", true
			if tc.etcd {
				want = "https://flotilla-etcd-0.flotilla-etcd.flotilla-system.svc.cluster.local:2379," +
					"https://flotilla-etcd-1.flotilla-etcd.flotilla-system.svc.cluster.local:2379," +
					"https://flotilla-etcd-2.flotilla-etcd.flotilla-system.svc.cluster.local:2379"
				wantSearchEtcd = map[string]string{"--etcd-cafile": "flotilla-search-etcd-client/ca.crt",
					"--etcd-certfile": "flotilla-search-etcd-client/tls.crt", "--etcd-keyfile": "flotilla-search-etcd-client/tls.key"}
				wantPrefix, wantPrefixSet = "", false
			}
			for _, name := range []string{"flotilla-apiserver", "flotilla-search"} {
				a := args(t, objs, name)
				if etcdServers, _ := flagValue(a, "--etcd-servers"); etcdServers != want {
					t.Errorf("%s: --etcd-servers=%s, want %s", name, etcdServers, want)
				}
				if prefix, ok := flagValue(a, "--etcd-prefix"); prefix != wantPrefix || ok != wantPrefixSet {
					t.Errorf("%s: --etcd-prefix=%q (set: %t), want %q (set: %t)", name, prefix, ok, wantPrefix, wantPrefixSet)
				}
			}
			search := pods(t, objs)["Deployment/flotilla-search"]
			if diff := cmp.Diff(wantSearchEtcd, fileSources(t, search, "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile")); diff != "" {
				t.Errorf("search's etcd client files, as Secret/key (-want +got):\n%s", diff)
			}

			if path := os.Getenv("FLOTILLA_CHART_RENDER"); path != "" && tc.values == nil {
				if err := os.WriteFile(path, []byte(r.Manifest), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote the default render to %s", path)
			}
		})
	}
}

// checkPod checks what every pod of the chart must have: the restricted
// security context, resource requests and, for servers, probes.
func checkPod(t *testing.T, name string, pod corev1.PodTemplateSpec) {
	t.Helper()
	if ps := pod.Spec.SecurityContext; ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext %+v, want runAsNonRoot and seccompProfile RuntimeDefault", name, ps)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("%s: mounts a host-cluster service-account token; the components use their own kubeconfig", name)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		where := name + " container " + c.Name
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Errorf("%s: no securityContext", where)
			continue
		case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot, sc.RunAsUser == nil || *sc.RunAsUser != 65532:
			t.Errorf("%s: runAsNonRoot %v, runAsUser %v; want true, 65532", where, sc.RunAsNonRoot, sc.RunAsUser)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("%s: the root file system is writable", where)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("%s: allows privilege escalation", where)
		case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
			t.Errorf("%s: capabilities %+v, want drop [ALL] and no add", where, sc.Capabilities)
		case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
			t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", where, sc.SeccompProfile)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s: requests %v, want cpu and memory", where, c.Resources.Requests)
		}
		if !strings.HasPrefix(name, "Job/") && (c.LivenessProbe == nil || c.ReadinessProbe == nil) {
			t.Errorf("%s: liveness %v, readiness %v; want both probes", where, c.LivenessProbe, c.ReadinessProbe)
		}
	}
}

// TestComponents checks each component's command line: the health ports
// the probes read, leader election, the controllers, the API server's
// admission, the files the aggregated servers are given, and how the
// install Job registers the webhook, the metrics adapter and search.
func TestComponents(t *testing.T) {
	objs := byKind(render(t, nil))
	probes := map[string]struct {
		scheme            corev1.URIScheme
		port              int32
		liveness, readyz  string
		healthFlag, value string
	}{
		"flotilla-apiserver":               {corev1.URISchemeHTTPS, 5443, "/livez", "/readyz", "--secure-port", "5443"},
		"flotilla-controller-manager":      {corev1.URISchemeHTTP, 10357, "/healthz", "/readyz", "--health-probe-bind-address", ":10357"},
		"flotilla-scheduler":               {corev1.URISchemeHTTP, 10351, "/healthz", "/readyz", "--health-probe-bind-address", ":10351"},
		"flotilla-webhook":                 {corev1.URISchemeHTTP, 8000, "/healthz", "/readyz", "--health-probe-bind-address", ":8000"},
		"flotilla-metrics-adapter":         {corev1.URISchemeHTTPS, 8443, "/livez", "/readyz", "--secure-port", "8443"},
		"flotilla-search":                  {corev1.URISchemeHTTPS, 8443, "/livez", "/readyz", "--secure-port", "8443"},
		"flotilla-kube-controller-manager": {corev1.URISchemeHTTPS, 10257, "/healthz", "/healthz", "--secure-port", "10257"},
	}
	for name, want := range probes {
		d := convert[appsv1.Deployment](t, objs["Deployment"][name])
		c := d.Spec.Template.Spec.Containers[0]
		port := func(p *corev1.Probe) int32 {
			for _, cp := range c.Ports {
				if cp.Name == p.HTTPGet.Port.StrVal {
					return cp.ContainerPort
				}
			}
			return p.HTTPGet.Port.IntVal
		}
		for kind, p := range map[string]*corev1.Probe{want.liveness: c.LivenessProbe, want.readyz: c.ReadinessProbe} {
			if p.HTTPGet == nil || p.HTTPGet.Scheme != want.scheme && !(want.scheme == corev1.URISchemeHTTP && p.HTTPGet.Scheme == "") ||
				port(p) != want.port || p.HTTPGet.Path != kind {
				t.Errorf("%s: probe %+v, want %s %s on port %d", name, p.HTTPGet, want.scheme, kind, want.port)
			}
		}
		if v, _ := flagValue(c.Args, want.healthFlag); v != want.value {
			t.Errorf("%s: %s=%q, want %q (what the probes read)", name, want.healthFlag, v, want.value)
		}
	}

	for _, name := range []string{"flotilla-controller-manager", "flotilla-scheduler", "flotilla-kube-controller-manager"} {
		if v, ok := flagValue(args(t, objs, name), "--leader-elect"); ok && v != "true" {
			t.Errorf("%s: --leader-elect=%s; its replicas must elect a leader", name, v)
		}
	}
	cm := args(t, objs, "flotilla-controller-manager")
	if cm[0] != "controller-manager" {
		t.Errorf("controller manager runs %q", cm[0])
	}
	if v, _ := flagValue(cm, "--controllers"); v != "*,-scheduler" {
		t.Errorf("controller manager --controllers=%s, want *,-scheduler (the scheduler runs on its own)", v)
	}
	if s := args(t, objs, "flotilla-scheduler"); s[0] != "scheduler" {
		t.Errorf("scheduler runs %q", s[0])
	}
	kcm := args(t, objs, "flotilla-kube-controller-manager")
	if v, _ := flagValue(kcm, "--controllers"); v != strings.Join(localstack.ControlPlaneControllers, ",") {
		t.Errorf("kube-controller-manager --controllers=%s, want localstack.ControlPlaneControllers %v", v, localstack.ControlPlaneControllers)
	}

	api := args(t, objs, "flotilla-apiserver")
	if diff := cmp.Diff([]string{"component", localstack.KindAPIServer, "--control-plane", "--"}, api[:4]); diff != "" {
		t.Errorf("API server command (-want +got):\n%s", diff)
	}
	for _, flag := range []string{"--authorization-mode=RBAC", "--client-ca-file=/etc/flotilla/pki/ca.crt", "--enable-bootstrap-token-auth=true",
		"--service-account-issuer=https://kubernetes.default.svc", "--token-auth-file=/etc/flotilla/pki/tokens.csv"} {
		if !slices.Contains(api, flag) {
			t.Errorf("API server lacks %s", flag)
		}
	}
	// With `flotilla webhook` registered, the built-in copies of its
	// plugins are off; without it they do the work.
	wantOff := append(localstack.ControlPlaneDisabledAdmissionPlugins(), localstack.AdmissionClaimPlugin, "FlotillaDefaulting", "FlotillaValidation")
	if v, _ := flagValue(api, "--disable-admission-plugins"); v != strings.Join(wantOff, ",") {
		t.Errorf("--disable-admission-plugins=%s\nwant %s", v, strings.Join(wantOff, ","))
	}
	noWebhook := byKind(render(t, map[string]any{"webhook": map[string]any{"enabled": false}}))
	if v, _ := flagValue(args(t, noWebhook, "flotilla-apiserver"), "--disable-admission-plugins"); v != strings.Join(localstack.ControlPlaneDisabledAdmissionPlugins(), ",") {
		t.Errorf("webhook.enabled=false: --disable-admission-plugins=%s, want the built-in Flotilla plugins on", v)
	}
	if noWebhook["Deployment"]["flotilla-webhook"] != nil || slices.ContainsFunc(args(t, noWebhook, "flotilla-install"), func(a string) bool { return strings.HasPrefix(a, "--webhook") }) {
		t.Errorf("webhook.enabled=false still deploys or registers the webhook")
	}

	// Each aggregated server reads its own kubeconfig and serving
	// certificate; the install Job gives the control plane their CA.
	for _, server := range []string{"metrics-adapter", "search"} {
		d := "flotilla-" + server
		if a := args(t, objs, d); a[0] != server {
			t.Errorf("%s runs %q, want %s", d, a[0], server)
		}
		want := map[string]string{"--kubeconfig": d + "-kubeconfig/kubeconfig", "--tls-cert-file": d + "-certs/tls.crt", "--tls-private-key-file": d + "-certs/tls.key"}
		if diff := cmp.Diff(want, fileSources(t, pods(t, objs)["Deployment/"+d], "--kubeconfig", "--tls-cert-file", "--tls-private-key-file")); diff != "" {
			t.Errorf("%s's files, as Secret/key (-want +got):\n%s", d, diff)
		}
		flag := "--" + server + "-ca-bundle"
		if diff := cmp.Diff(map[string]string{flag: d + "-certs/ca.crt"}, fileSources(t, pods(t, objs)["Job/flotilla-install"], flag)); diff != "" {
			t.Errorf("install Job's %s, as Secret/key (-want +got):\n%s", flag, diff)
		}
	}

	job := args(t, objs, "flotilla-install")
	for _, flag := range []string{"install", "--kubeconfig=/etc/flotilla/kubeconfig/kubeconfig",
		"--webhook-url=https://flotilla-webhook.flotilla-system.svc.cluster.local:443", "--webhook-ca-bundle=/etc/flotilla/webhook-certs/ca.crt",
		"--metrics-adapter-service=karmada-system/flotilla-metrics-adapter:443",
		"--metrics-adapter-external-name=flotilla-metrics-adapter.flotilla-system.svc.cluster.local",
		"--metrics-adapter-ca-bundle=/etc/flotilla/metrics-adapter-certs/ca.crt",
		"--search-service=karmada-system/flotilla-search:443",
		"--search-external-name=flotilla-search.flotilla-system.svc.cluster.local",
		"--search-ca-bundle=/etc/flotilla/search-certs/ca.crt"} {
		if !slices.Contains(job, flag) {
			t.Errorf("install Job lacks %s: %v", flag, job)
		}
	}

	// An external etcd that takes no client certificate: search, like the
	// API server, is given none, and mounts no etcd Secret.
	plainEtcd := byKind(render(t, map[string]any{"etcd": map[string]any{"external": map[string]any{"endpoints": []any{"http://etcd.example.com:2379"}}}}))
	if got := fileSources(t, pods(t, plainEtcd)["Deployment/flotilla-search"], "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile"); len(got) > 0 {
		t.Errorf("an external etcd without tlsSecretName: search is given etcd client files %v", got)
	}
	for _, v := range pods(t, plainEtcd)["Deployment/flotilla-search"].Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName != "flotilla-search-kubeconfig" && v.Secret.SecretName != "flotilla-search-certs" {
			t.Errorf("an external etcd without tlsSecretName: search mounts the Secret %s", v.Secret.SecretName)
		}
	}

	// search.enabled=false: nothing of search is deployed, issued or
	// registered, and the install Job mounts none of its Secrets.
	noSearch := byKind(render(t, map[string]any{"search": map[string]any{"enabled": false}}))
	for kind, byName := range noSearch {
		for name := range byName {
			if strings.HasPrefix(name, "flotilla-search") {
				t.Errorf("search.enabled=false still renders %s %s", kind, name)
			}
		}
	}
	if slices.ContainsFunc(args(t, noSearch, "flotilla-install"), func(a string) bool { return strings.HasPrefix(a, "--search") }) {
		t.Errorf("search.enabled=false still registers search: %v", args(t, noSearch, "flotilla-install"))
	}
	for _, v := range pods(t, noSearch)["Job/flotilla-install"].Spec.Volumes {
		if v.Secret != nil && strings.HasPrefix(v.Secret.SecretName, "flotilla-search") {
			t.Errorf("search.enabled=false: the install Job still mounts %s", v.Secret.SecretName)
		}
	}
}

func secretData(t *testing.T, objs map[string]map[string]*unstructured.Unstructured, secret, key string) []byte {
	t.Helper()
	s := objs["Secret"][secret]
	if s == nil {
		t.Fatalf("no Secret %s", secret)
	}
	v, _, _ := unstructured.NestedString(s.Object, "data", key)
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(data) == 0 {
		t.Fatalf("Secret %s key %s: %q %v", secret, key, v, err)
	}
	return data
}

func parseCert(t *testing.T, what string, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s: no PEM", what)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// TestPKI checks that the generated certificates fit together: the serving
// certificates verify, under the cluster CA, for the names their clients
// dial; the etcd client certificates (the API server's, search's) verify
// under the etcd CA; each component's kubeconfig is the user `flotilla
// install` binds; the admin kubeconfig's token is a system:masters token of
// the API server.
func TestPKI(t *testing.T) {
	objs := byKind(render(t, nil))
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secretData(t, objs, "flotilla-ca", "ca.crt")) {
		t.Fatal("flotilla-ca ca.crt is no certificate")
	}
	for _, tc := range []struct{ secret, key, host string }{
		{"flotilla-apiserver-certs", "apiserver.crt", "flotilla-apiserver.flotilla-system.svc.cluster.local"},
		{"flotilla-apiserver-certs", "apiserver.crt", "flotilla-apiserver.flotilla-system.svc"},
		{"flotilla-apiserver-certs", "apiserver.crt", "127.0.0.1"},
		{"flotilla-webhook-certs", "tls.crt", "flotilla-webhook.flotilla-system.svc.cluster.local"},
		// The control plane checks the adapter against its own ExternalName Service's name.
		{"flotilla-metrics-adapter-certs", "tls.crt", "flotilla-metrics-adapter.karmada-system.svc"},
		// Search too, and its own Service in the host cluster.
		{"flotilla-search-certs", "tls.crt", "flotilla-search.karmada-system.svc"},
		{"flotilla-search-certs", "tls.crt", "flotilla-search.flotilla-system.svc.cluster.local"},
	} {
		c := parseCert(t, tc.secret+"/"+tc.key, secretData(t, objs, tc.secret, tc.key))
		if _, err := c.Verify(x509.VerifyOptions{DNSName: tc.host, Roots: roots}); err != nil {
			t.Errorf("%s %s for %s: %v", tc.secret, tc.key, tc.host, err)
		}
	}
	etcdRoots := x509.NewCertPool()
	etcdRoots.AppendCertsFromPEM(secretData(t, objs, "flotilla-etcd-certs", "ca.crt"))
	etcd := parseCert(t, "etcd", secretData(t, objs, "flotilla-etcd-certs", "tls.crt"))
	if _, err := etcd.Verify(x509.VerifyOptions{DNSName: "flotilla-etcd-2.flotilla-etcd.flotilla-system.svc.cluster.local", Roots: etcdRoots}); err != nil {
		t.Errorf("etcd member certificate: %v", err)
	}
	client := parseCert(t, "etcd client", secretData(t, objs, "flotilla-apiserver-certs", "etcd-client.crt"))
	if _, err := client.Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the API server's etcd client certificate: %v", err)
	}
	searchClient := parseCert(t, "search's etcd client", secretData(t, objs, "flotilla-search-etcd-client", "tls.crt"))
	if _, err := searchClient.Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("search's etcd client certificate: %v", err)
	}
	if searchClient.Equal(client) {
		t.Errorf("search uses the API server's etcd client certificate; it gets its own")
	}
	// Search trusts etcd by the ca.crt beside its certificate.
	if got, want := secretData(t, objs, "flotilla-search-etcd-client", "ca.crt"), secretData(t, objs, "flotilla-etcd-certs", "ca.crt"); string(got) != string(want) {
		t.Errorf("flotilla-search-etcd-client ca.crt is not the etcd CA")
	}
	for _, secret := range []string{"flotilla-search-certs", "flotilla-search-etcd-client"} {
		if _, err := tls.X509KeyPair(secretData(t, objs, secret, "tls.crt"), secretData(t, objs, secret, "tls.key")); err != nil {
			t.Errorf("%s: tls.key does not go with tls.crt: %v", secret, err)
		}
	}

	// Search is not one of controlplane.Components, but gets its identity
	// the same way.
	for _, component := range append(slices.Clone(controlplane.Components), controlplane.SearchComponent) {
		cfg, err := clientcmd.Load(secretData(t, objs, "flotilla-"+component+"-kubeconfig", "kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
		c := parseCert(t, component, user.ClientCertificateData)
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || c.Subject.CommonName != "system:flotilla:"+component {
			t.Errorf("%s kubeconfig: client certificate %q (%v), want system:flotilla:%s under the CA", component, c.Subject.CommonName, err, component)
		}
		if server := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; server != "https://flotilla-apiserver.flotilla-system.svc.cluster.local:5443" {
			t.Errorf("%s kubeconfig: server %s", component, server)
		}
	}
	admin, err := clientcmd.Load(secretData(t, objs, "flotilla-kubeconfig", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	token := admin.AuthInfos[admin.Contexts["karmada-apiserver"].AuthInfo].Token
	tokens := string(secretData(t, objs, "flotilla-apiserver-certs", "tokens.csv"))
	if want := fmt.Sprintf("%s,flotilla:admin,flotilla:admin,system:masters\n", token); len(token) < 32 || tokens != want {
		t.Errorf("tokens.csv %q does not give the admin kubeconfig's token (%d characters) system:masters", tokens, len(token))
	}
}

// clusterWith answers the chart's lookup calls from a fake cluster.
type clusterWith struct {
	client *dynamicfake.FakeDynamicClient
}

func (c clusterWith) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion != "v1" || kind != "Secret" {
		return nil, false, fmt.Errorf("the chart looks up only Secrets, not %s %s", apiVersion, kind)
	}
	return c.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}), true, nil
}

// TestUpgradeKeepsTheRootOfTrust renders the chart as an upgrade does, with
// the first install's <release>-ca Secret in the cluster: the CAs, the
// service-account key and the admin token come back unchanged, and the
// certificates issued again verify under the old CA.
func TestUpgradeKeepsTheRootOfTrust(t *testing.T) {
	first := byKind(render(t, nil))
	old := first["Secret"]["flotilla-ca"]

	chrt, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = helmchart.KubeVersion
	vals, err := chartutil.ToRenderValues(chrt, nil, chartutil.ReleaseOptions{Name: helmchart.ReleaseName, Namespace: ns, Revision: 2, IsUpgrade: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.RenderWithClientProvider(chrt, vals, clusterWith{dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), old)})
	if err != nil {
		t.Fatal(err)
	}
	upgraded := map[string]map[string]*unstructured.Unstructured{"Secret": {}}
	for _, doc := range strings.Split(files["flotilla/templates/secrets.yaml"], "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil || obj.GetKind() != "Secret" {
			continue
		}
		upgraded["Secret"][obj.GetName()] = obj
	}
	for _, key := range []string{"ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd-ca.crt", "etcd-ca.key", "sa.key", "admin-token"} {
		if string(secretData(t, first, "flotilla-ca", key)) != string(secretData(t, upgraded, "flotilla-ca", key)) {
			t.Errorf("flotilla-ca %s changed on upgrade", key)
		}
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(secretData(t, first, "flotilla-ca", "ca.crt"))
	c := parseCert(t, "apiserver", secretData(t, upgraded, "flotilla-apiserver-certs", "apiserver.crt"))
	if _, err := c.Verify(x509.VerifyOptions{DNSName: "flotilla-apiserver.flotilla-system.svc", Roots: roots}); err != nil {
		t.Errorf("the upgrade's API server certificate does not verify under the first install's CA: %v", err)
	}
	etcdRoots := x509.NewCertPool()
	etcdRoots.AppendCertsFromPEM(secretData(t, first, "flotilla-ca", "etcd-ca.crt"))
	searchClient := parseCert(t, "search's etcd client", secretData(t, upgraded, "flotilla-search-etcd-client", "tls.crt"))
	if _, err := searchClient.Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the upgrade's etcd client certificate of search does not verify under the first install's etcd CA: %v", err)
	}
	token := string(secretData(t, first, "flotilla-ca", "admin-token"))
	if tokens := string(secretData(t, upgraded, "flotilla-apiserver-certs", "tokens.csv")); !strings.HasPrefix(tokens, token+",") {
		t.Errorf("the upgrade's tokens.csv lost the admin token")
	}
}
