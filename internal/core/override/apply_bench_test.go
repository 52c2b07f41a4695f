package override

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// benchDeployment is a Deployment of the size users propagate: two containers with ports,
// environment, resources and probes, a volume, and the labels and annotations a template carries.
const benchDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: frontend, team: payments}
  annotations:
    deployment.kubernetes.io/revision: "3"
    example.io/owner: payments@example.io
spec:
  replicas: 3
  revisionHistoryLimit: 10
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  template:
    metadata:
      labels: {app: web, tier: frontend}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: web
        image: registry.example.io/payments/web:1.25.3
        ports:
        - {name: http, containerPort: 8080, protocol: TCP}
        env:
        - {name: LOG_LEVEL, value: info}
        - {name: REGION, value: eu-west-1}
        resources:
          requests: {cpu: 250m, memory: 256Mi}
          limits: {cpu: "1", memory: 512Mi}
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 5
        livenessProbe:
          httpGet: {path: /livez, port: http}
          initialDelaySeconds: 10
        volumeMounts:
        - {name: config, mountPath: /etc/web}
      - name: proxy
        image: envoyproxy/envoy:v1.31.0
        args: [--config-path, /etc/envoy/envoy.yaml]
        ports:
        - {name: admin, containerPort: 9901}
      volumes:
      - name: config
        configMap: {name: web-config}
`

// benchPolicy is a typical OverridePolicy rule for one member: three plaintext operations
// (replicas, an annotation, an environment variable), a registry change for every container and
// two labels.
func benchPolicy() *policyv1alpha1.OverridePolicy {
	return newPolicy("default", "web-member1").selecting(byName("apps/v1", "Deployment", "web")).
		rule(clusters("member1"), policyv1alpha1.Overriders{
			Plaintext: []policyv1alpha1.PlaintextOverrider{
				plaintext(opReplace, "/spec/replicas", `5`),
				plaintext(opAdd, "/metadata/annotations/example.io~1cluster", `"member1"`),
				plaintext(opAdd, "/spec/template/spec/containers/0/env/-", `{"name":"CLUSTER","value":"member1"}`),
			},
			ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Registry, Operator: opReplace, Value: "mirror.member1.example.io"},
			},
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
				{Operator: opAdd, Value: map[string]string{"cluster": "member1", "env": "prod"}},
			},
		}).build()
}

// BenchmarkApplyTypicalOverridePolicy measures Apply of benchPolicy to benchDeployment for one
// member cluster: the work the binding controller does per Work it renders.
func BenchmarkApplyTypicalOverridePolicy(b *testing.B) {
	manifest := object(b, benchDeployment)
	ops := []*policyv1alpha1.OverridePolicy{benchPolicy()}
	cluster := member("member1", nil)
	// One checked run first, so the benchmark cannot measure a rule that silently stopped
	// applying.
	out, applied, err := Apply(manifest, cluster, ops, nil)
	if err != nil || len(applied.Overrides) != 1 {
		b.Fatalf("Apply() = %v applied rules, error %v; want 1 rule", len(applied.Overrides), err)
	}
	if replicas, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); replicas != 5 {
		b.Fatalf("spec.replicas = %d after the override, want 5", replicas)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Apply(manifest, cluster, ops, nil); err != nil {
			b.Fatal(err)
		}
	}
}
