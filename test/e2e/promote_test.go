package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPromote takes an application running in member1 into the control
// plane with `flotilla promote`: a Deployment and the ConfigMap its pods
// read, with --dependencies (one policy, with propagateDeps, as karmadactl
// writes it), then a Service of the same name; a ResourceInterpreterCustomization's
// dependencies replace the built-in ones. The member's
// Deployment is adopted in place (its pods and pod template unchanged); a
// dry run creates nothing; what cannot be promoted is refused and changes
// nothing.
func TestPromote(t *testing.T) {
	s := sharedStackOf(t, 2)
	cp, _ := s.kubeconfig("")
	promote := func(args ...string) (string, error) {
		cmd := exec.Command(flotillaBin, append([]string{"promote", "--kubeconfig", cp}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	mustPromote := func(args ...string) string {
		t.Helper()
		out, err := promote(args...)
		if err != nil {
			t.Fatalf("flotilla promote %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	refused := func(why string, want []string, args ...string) {
		t.Helper()
		out, err := promote(args...)
		if err == nil {
			t.Errorf("%s: flotilla promote %s succeeded:\n%s", why, strings.Join(args, " "), out)
			return
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the error does not say %q:\n%s", why, w, out)
			}
		}
	}

	// The application, created directly in member1.
	s.kubectl("member1", "create", "namespace", "shop")
	s.mustApply(t, "member1", `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {GREETING: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx
        envFrom: [{configMapRef: {name: web-config}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`)
	s.waitFor(t, "2", "member1", "deploy", "web", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	podTemplate := s.get("member1", "deploy", "web", "-n", "shop", "-o", "jsonpath={.spec.template}")
	pods := s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.uid}")
	if podTemplate == "" || len(strings.Fields(pods)) != 2 {
		t.Fatalf("member1 runs pods %q of template %q; want 2", pods, podTemplate)
	}

	// A dry run prints every object it would create, as a YAML stream, and creates none.
	out := mustPromote("deployment", "web", "-n", "shop", "-C", "member1", "--dependencies", "--dry-run", "-o", "yaml")
	for _, want := range []string{"kind: Namespace", "kind: ConfigMap", "kind: Deployment", "kind: PropagationPolicy", "conflictResolution: Overwrite", "propagateDeps: true", "- member1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run's YAML lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "kind: PropagationPolicy"); n != 1 {
		t.Errorf("the dry run prints %d PropagationPolicies, want 1 (the Deployment's, which takes its dependencies along):\n%s", n, out)
	}
	for _, bad := range []string{"uid:", "resourceVersion:", "managedFields", "status:", "deployment.kubernetes.io/revision"} {
		if strings.Contains(out, bad) {
			t.Errorf("the dry run's YAML still has %q:\n%s", bad, out)
		}
	}
	if got := s.get("", "ns", "shop", "-o", "name"); got != "" {
		t.Errorf("the dry run created namespace shop: %q", got)
	}

	// The real thing, with kubectl's short name for the kind.
	out = mustPromote("deploy", "web", "-n", "shop", "-C", "member1", "--dependencies")
	for _, want := range []string{"configmap/web-config created", "deployment.apps/web created", "propagationpolicy.policy.karmada.io/web-"} {
		if !strings.Contains(out, want) {
			t.Errorf("promote's output lacks %q:\n%s", want, out)
		}
	}
	policies := strings.Fields(s.get("", "pp", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(policies) != 1 {
		t.Fatalf("policies in shop: %v, want the Deployment's only", policies)
	}
	// The Deployment is claimed by promote's policy, the ConfigMap follows
	// it as a dependency (an attached binding), and the Deployment's status
	// is aggregated from member1.
	s.waitFor(t, policies[0], "", "deploy", "web", "-n", "shop", "-o", `jsonpath={.metadata.annotations.propagationpolicy\.karmada\.io/name}`)
	s.waitFor(t, "member1", "", "rb", "web-config-configmap", "-n", "shop", "-o", "jsonpath={.spec.requiredBy[*].clusters[*].name}")
	s.waitFor(t, "2", "", "deploy", "web", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	// member1's Deployment and ConfigMap are adopted in place.
	for _, obj := range []string{"deploy/web", "cm/web-config"} {
		eventually(t, 2*time.Minute, "member1's "+obj+" to be adopted", func() (bool, string) {
			w := s.get("member1", obj, "-n", "shop", "-o", `jsonpath={.metadata.annotations.work\.karmada\.io/name}`)
			return w != "", w
		})
	}
	if got := s.get("member1", "deploy", "web", "-n", "shop", "-o", "jsonpath={.spec.template}"); got != podTemplate {
		t.Errorf("member1's pod template changed on adoption:\nbefore %s\nafter  %s", podTemplate, got)
	}
	if got := s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.uid}"); got != pods {
		t.Errorf("member1's pods changed from %q to %q", pods, got)
	}

	// A policy already on the control plane that would claim the Service
	// first (higher priority) makes promote refuse, naming it.
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all-services, namespace: shop}
spec:
  priority: 5
  resourceSelectors: [{apiVersion: v1, kind: Service}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`)
	refused("an object another policy would claim", []string{"would be claimed by PropagationPolicy(shop/all-services)", "delete that policy or narrow"},
		"service", "web", "-n", "shop", "-C", "member1")
	if got := s.get("", "svc", "web", "-n", "shop", "-o", "name"); got != "" {
		t.Errorf("the refused promote created %s", got)
	}
	s.kubectl("", "delete", "pp", "all-services", "-n", "shop")

	// A customization's dependencies replace the built-in ones: this
	// ReplicaSet reads cache-config, but its customization names Service web.
	s.mustApply(t, "member1", `apiVersion: v1
kind: ConfigMap
metadata: {name: cache-config, namespace: shop}
data: {SIZE: "1"}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache, namespace: shop}
spec:
  replicas: 0
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers: [{name: app, image: nginx, envFrom: [{configMapRef: {name: cache-config}}]}]
`)
	s.mustApply(t, "", `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: replicaset-deps}
spec:
  target: {apiVersion: apps/v1, kind: ReplicaSet}
  customizations:
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(desiredObj)
          return {{apiVersion = "v1", kind = "Service", namespace = desiredObj.metadata.namespace, name = "web"}}
        end
`)
	out = mustPromote("replicaset", "cache", "-n", "shop", "-C", "member1", "-d", "--dry-run", "-o", "yaml")
	if !strings.Contains(out, "kind: Service") || strings.Contains(out, "kind: ConfigMap") || !strings.Contains(out, "propagateDeps: true") {
		t.Errorf("promote -d of a kind with a dependency customization must take the customization's Service, not the built-in ConfigMap:\n%s", out)
	}
	s.kubectl("", "delete", "resourceinterpretercustomization", "replicaset-deps")

	// A Service of the same name gets a policy of its own.
	mustPromote("service", "web", "-n", "shop", "-C", "member1")
	all := strings.Fields(s.get("", "pp", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(all) != 2 {
		t.Fatalf("policies after promoting Service web: %v, want 2", all)
	}
	svcPolicy := s.get("", "pp", "-n", "shop", "-o", `jsonpath={.items[?(@.spec.resourceSelectors[0].kind=="Service")].metadata.name}`)
	deployPolicy := s.get("", "pp", "-n", "shop", "-o", `jsonpath={.items[?(@.spec.resourceSelectors[0].kind=="Deployment")].metadata.name}`)
	if svcPolicy == "" || svcPolicy == deployPolicy || !strings.HasPrefix(svcPolicy, "web-") || !strings.HasPrefix(deployPolicy, "web-") {
		t.Errorf("Service web's policy %q and Deployment web's %q must differ, both named after web", svcPolicy, deployPolicy)
	}
	if ip := s.get("", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}"); ip == s.get("member1", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}") {
		t.Errorf("the template kept member1's cluster IP %s", ip)
	}

	// Refusals change nothing.
	refused("an object already on the control plane", []string{"already exists on the control plane", "PropagationPolicy"},
		"deployment", "web", "-n", "shop", "-C", "member1")
	refused("a cluster that is not joined", []string{`"member9" is not joined`, "member1, member2"},
		"deployment", "web", "-n", "shop", "-C", "member9")
	refused("an unknown kind", []string{`unknown kind "widget"`, "kubectl api-resources"},
		"widget", "web", "-n", "shop", "-C", "member1")
	refused("an object missing from the member", []string{"not found in member cluster member1"},
		"deployment", "nope", "-n", "shop", "-C", "member1")
	if got := strings.Fields(s.get("", "pp", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}")); len(got) != 2 {
		t.Errorf("policies after the refusals: %v, want the same 2", got)
	}
}
