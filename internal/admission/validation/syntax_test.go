package validation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/api/crds"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// resourceOf maps a served Karmada kind to its resource, from the embedded CRDs.
func resourceOf(t *testing.T) map[schema.GroupKind]schema.GroupVersionResource {
	t.Helper()
	all, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	out := map[schema.GroupKind]schema.GroupVersionResource{}
	for _, crd := range all {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				out[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] =
					schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			}
		}
	}
	return out
}

// decode reads a YAML object as the API server does (whole numbers as int64).
func decode(doc []byte) (map[string]any, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	return obj, utiljson.Unmarshal(data, &obj)
}

// admissionErrors are all the errors a create of obj meets: the CRD's schema and CEL rules,
// then the plugin's Go checks.
func admissionErrors(t *testing.T, resources map[schema.GroupKind]schema.GroupVersionResource, obj map[string]any) field.ErrorList {
	t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatal(err)
	}
	gvr, ok := resources[gv.WithKind(kind).GroupKind()]
	if !ok {
		t.Fatalf("no served CRD for %s %s", apiVersion, kind)
	}
	gvr.Version = gv.Version
	errs := schemaErrors(context.Background(), gvr, obj, nil)
	return append(errs, check(gvr.GroupResource(), obj)...)
}

// TestEnumsAndSyntaxesAreChecked applies objects with one bad enum value or one value of bad
// syntax each, and valid Karmada objects, through the CRD schemas and the plugin's checks:
// each bad one is refused with an error naming its field, each valid one accepted.
func TestEnumsAndSyntaxesAreChecked(t *testing.T) {
	const (
		pp   = "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\n"
		cpp  = "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: p}\n"
		op   = "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o, namespace: default}\n"
		ctp  = "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: c}\n"
		frq  = "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata: {name: q, namespace: default}\n"
		cl   = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: member1}\n"
		mci  = "apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterIngress\nmetadata: {name: i, namespace: default}\n"
		rem  = "apiVersion: remedy.karmada.io/v1alpha1\nkind: Remedy\nmetadata: {name: r}\n"
		riwc = "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata: {name: w}\n"
		sel  = "resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]"
		hook = "webhooks:\n- name: workloads.example.com\n  clientConfig: {url: \"https://interpreter.example.com:443/interpret\"}\n"
		path = "    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}\n"
	)
	resources := resourceOf(t)
	for _, tc := range []struct {
		name, doc string
		want      string // the field an error must name; "" for an accepted object
	}{
		// PropagationPolicy and ClusterPropagationPolicy: label selectors, label keys.
		{"pp valid selectors", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchLabels: {location: us}, matchExpressions: [{key: tier, operator: In, values: [gold]}, {key: edge, operator: DoesNotExist}]}}}}", ""},
		{"pp selector operator", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchExpressions: [{key: tier, operator: Equals, values: [gold]}]}}}}", "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator"},
		{"pp Exists with values", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchExpressions: [{key: tier, operator: Exists, values: [gold]}]}}}}", "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].values"},
		{"pp In without values", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchExpressions: [{key: tier, operator: In}]}}}}", "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].values"},
		{"pp matchLabels key", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchLabels: {\"bad key!\": us}}}}}", "spec.placement.clusterAffinity.labelSelector.matchLabels"},
		{"pp matchLabels value", pp + "spec: {" + sel + ", placement: {clusterAffinity: {labelSelector: {matchLabels: {location: \"us east\"}}}}}", "spec.placement.clusterAffinity.labelSelector.matchLabels"},
		{"pp affinity term selector", pp + "spec: {" + sel + ", placement: {clusterAffinities: [{affinityName: a, labelSelector: {matchLabels: {\"-bad\": x}}}]}}", "spec.placement.clusterAffinities[0].labelSelector.matchLabels"},
		{"pp resource selector", pp + "spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchExpressions: [{key: app, operator: Bogus}]}}], placement: {}}", "spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator"},
		{"cpp resource selector", cpp + "spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: \"a b\"}}}], placement: {}}", "spec.resourceSelectors[0].labelSelector.matchLabels"},
		{"pp groupByLabelKey", pp + "spec: {" + sel + ", placement: {workloadAffinity: {affinity: {groupByLabelKey: \"app group\"}}}}", "spec.placement.workloadAffinity.affinity.groupByLabelKey"},
		{"pp anti groupByLabelKey", pp + "spec: {" + sel + ", placement: {workloadAffinity: {antiAffinity: {groupByLabelKey: \"/x\"}}}}", "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey"},
		{"pp valid groupByLabelKey", pp + "spec: {" + sel + ", placement: {workloadAffinity: {affinity: {groupByLabelKey: example.io/group}}}}", ""},
		{"pp aliasLabelName", pp + "spec: {" + sel + ", placement: {}, failover: {cluster: {purgeMode: Directly, statePreservation: {rules: [{aliasLabelName: \"bad key!\", jsonPath: \"{.spec.x}\"}]}}}}", "spec.failover.cluster.statePreservation.rules[0].aliasLabelName"},
		{"pp valid aliasLabelName", pp + "spec: {" + sel + ", propagateDeps: true, placement: {}, failover: {application: {decisionConditions: {tolerationSeconds: 60}, purgeMode: Immediately, statePreservation: {rules: [{aliasLabelName: failover.karmada.io/replicas, jsonPath: \"{.replicas}\"}]}}}}", ""},
		// OverridePolicy: selectors and fieldOverrider.
		{"op targetCluster selector", op + "spec: {" + sel + ", overrideRules: [{targetCluster: {labelSelector: {matchLabels: {\"bad key!\": x}}}, overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}}]}", "spec.overrideRules[0].targetCluster.labelSelector.matchLabels"},
		{"op resource selector", op + "spec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: \"a b\"}}}], overrideRules: [{overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}}]}", "spec.resourceSelectors[0].labelSelector.matchLabels"},
		{"op fieldOverrider without json or yaml", op + "spec: {" + sel + ", overrideRules: [{overriders: {fieldOverrider: [{fieldPath: /data/config}]}}]}", "spec.overrideRules[0].overriders.fieldOverrider[0]"},
		{"op valid fieldOverrider", op + "spec: {" + sel + ", overrideRules: [{overriders: {fieldOverrider: [{fieldPath: /data/config, yaml: [{subPath: /a, operator: replace, value: 1}]}]}}]}", ""},
		// ClusterTaintPolicy: operators, effects, taint syntax, target selectors.
		{"ctp valid", ctp + "spec: {targetClusters: {clusterNames: [member1]}, addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: [\"True\"]}], removeOnConditions: [{conditionType: Ready, operator: In, statusValues: [\"True\"]}], taints: [{key: cluster.karmada.io/not-ready, effect: NoSchedule}, {key: cluster.karmada.io/not-ready, effect: NoExecute}]}", ""},
		{"ctp operator", ctp + "spec: {addOnConditions: [{conditionType: Ready, operator: Equal, statusValues: [\"False\"]}], taints: [{key: a, effect: NoSchedule}]}", "spec.addOnConditions[0].operator"},
		{"ctp effect", ctp + "spec: {taints: [{key: a, effect: NoScheduling}]}", "spec.taints[0].effect"},
		{"ctp taint key", ctp + "spec: {taints: [{key: \"not ready\", effect: NoSchedule}]}", "spec.taints[0].key"},
		{"ctp taint value", ctp + "spec: {taints: [{key: a, value: \"x y\", effect: NoSchedule}]}", "spec.taints[0].value"},
		{"ctp target selector", ctp + "spec: {targetClusters: {labelSelector: {matchExpressions: [{key: a, operator: Gt, values: [\"1\"]}]}}, taints: [{key: a, effect: NoSchedule}]}", "spec.targetClusters.labelSelector.matchExpressions[0].operator"},
		// FederatedResourceQuota: resource names, quantities, cluster names.
		{"frq valid", frq + "spec: {overall: {cpu: \"2\", memory: 4Gi, pods: \"10\", requests.storage: 1Ti, count/deployments.apps: \"3\", example.com/gpu: \"1\"}, staticAssignments: [{clusterName: member1, hard: {cpu: 500m, memory: 1Gi}}]}", ""},
		{"frq unknown resource", frq + "spec: {overall: {cpus: \"2\"}}", "spec.overall[cpus]"},
		{"frq negative", frq + "spec: {overall: {cpu: \"-1\"}}", "spec.overall[cpu]"},
		{"frq fractional pods", frq + "spec: {overall: {pods: 1500m}}", "spec.overall[pods]"},
		{"frq cluster name", frq + "spec: {overall: {cpu: \"1\"}, staticAssignments: [{clusterName: Member_1, hard: {cpu: \"1\"}}]}", "spec.staticAssignments[0].clusterName"},
		{"frq assignments over overall", frq + "spec: {overall: {cpu: \"2\"}, staticAssignments: [{clusterName: member1, hard: {cpu: \"2\"}}, {clusterName: member2, hard: {cpu: 500m}}]}",
			"spec.overall[cpu]"},
		{"frq assignment resource not in overall", frq + "spec: {overall: {cpu: \"2\"}, staticAssignments: [{clusterName: member1, hard: {memory: 1Gi}}]}",
			"spec.staticAssignments[0].hard[memory]"},
		{"frq assignment resource", frq + "spec: {overall: {cpu: \"1\"}, staticAssignments: [{clusterName: member1, hard: {\"bad name!\": \"1\"}}]}", "spec.staticAssignments[0].hard[bad name!]"},
		// Cluster: endpoint and proxy URLs, topology values, taints.
		{"cluster valid", cl + "spec: {syncMode: Push, apiEndpoint: \"https://172.18.0.3:6443\", proxyURL: \"socks5://10.0.0.1:1080\", provider: aws, region: us-east-1, zones: [us-east-1a, us-east-1b], taints: [{key: cluster.karmada.io/not-ready, effect: NoExecute}, {key: dedicated, value: gpu, effect: PreferNoSchedule}]}", ""},
		{"cluster endpoint without host", cl + "spec: {syncMode: Push, apiEndpoint: \"172.18.0.3\"}", "spec.apiEndpoint"},
		{"cluster endpoint query", cl + "spec: {syncMode: Push, apiEndpoint: \"https://a.example.com?x=1\"}", "spec.apiEndpoint"},
		{"cluster proxy scheme", cl + "spec: {syncMode: Push, proxyURL: \"ftp://proxy:21\"}", "spec.proxyURL"},
		{"cluster region", cl + "spec: {syncMode: Push, region: \"us east\"}", "spec.region"},
		{"cluster zones", cl + "spec: {syncMode: Push, zones: [\"zone a\"]}", "spec.zones[0]"},
		{"cluster taint effect", cl + "spec: {syncMode: Push, taints: [{key: a, effect: NoExecution}]}", "spec.taints[0].effect"},
		{"cluster taint key", cl + "spec: {syncMode: Push, taints: [{key: \"a b\", effect: NoSchedule}]}", "spec.taints[0].key"},
		{"cluster duplicate taint", cl + "spec: {syncMode: Push, taints: [{key: a, effect: NoSchedule}, {key: a, value: x, effect: NoSchedule}]}", "spec.taints[1]"},
		// MultiClusterIngress: as an Ingress.
		{"mci valid", mci + "spec:\n  tls: [{hosts: [demo.example.com], secretName: demo-tls}]\n  rules:\n  - host: \"*.example.com\"\n" + path, ""},
		{"mci host", mci + "spec:\n  rules:\n  - host: \"demo example.com\"\n" + path, "spec.rules[0].host"},
		{"mci host IP", mci + "spec:\n  rules:\n  - host: 10.0.0.1\n" + path, "spec.rules[0].host"},
		{"mci pathType", mci + "spec:\n  rules:\n  - http: {paths: [{path: /, pathType: Regex, backend: {service: {name: web, port: {number: 80}}}}]}\n", "spec.rules[0].http.paths[0].pathType"},
		{"mci relative path", mci + "spec:\n  rules:\n  - http: {paths: [{path: web, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}\n", "spec.rules[0].http.paths[0].path"},
		{"mci port", mci + "spec:\n  rules:\n  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 70000}}}}]}\n", "spec.rules[0].http.paths[0].backend.service.port.number"},
		{"mci tls secret", mci + "spec:\n  tls: [{secretName: Demo_TLS}]\n", "spec.tls[0].secretName"},
		// Remedy: actions.
		{"remedy valid", rem + "spec: {clusterAffinity: {clusterNames: [member1]}, decisionMatches: [{clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: Equal, conditionStatus: \"False\"}}], actions: [TrafficControl]}", ""},
		{"remedy action", rem + "spec: {actions: [Isolate]}", "spec.actions[0]"},
		{"remedy condition status", rem + "spec: {decisionMatches: [{clusterConditionMatch: {conditionType: Ready, operator: NotEqual, conditionStatus: \"true\"}}], actions: [TrafficControl]}", "spec.decisionMatches[0].clusterConditionMatch.conditionStatus"},
		{"remedy condition type", rem + "spec: {decisionMatches: [{clusterConditionMatch: {conditionType: ServiceDomainNameResolutonReady, operator: Equal, conditionStatus: \"False\"}}], actions: [TrafficControl]}", "spec.decisionMatches[0].clusterConditionMatch.conditionType"},
		// ResourceInterpreterWebhookConfiguration: operations, timeout, names, versions.
		{"riwc valid", riwc + hook + "  interpreterContextVersions: [v1alpha1]\n  timeoutSeconds: 3\n  rules: [{operations: [InterpretReplica, ReviseReplica, InterpretHealth], apiGroups: [workload.example.io], apiVersions: [v1alpha1], kinds: [Workload]}]\n", ""},
		{"riwc wildcard", riwc + hook + "  interpreterContextVersions: [v1alpha1]\n  rules: [{operations: [\"*\"], apiGroups: [\"*\"], apiVersions: [\"*\"], kinds: [\"*\"]}]\n", ""},
		{"riwc operation", riwc + hook + "  interpreterContextVersions: [v1alpha1]\n  rules: [{operations: [InterpretReplicas], apiGroups: [apps], apiVersions: [v1], kinds: [Deployment]}]\n", "webhooks[0].rules[0].operations[0]"},
		{"riwc wildcard with others", riwc + hook + "  interpreterContextVersions: [v1alpha1]\n  rules: [{operations: [\"*\", Retain], apiGroups: [apps], apiVersions: [v1], kinds: [Deployment]}]\n", "webhooks[0].rules[0].operations"},
		{"riwc timeout", riwc + hook + "  interpreterContextVersions: [v1alpha1]\n  timeoutSeconds: 31\n", "webhooks[0].timeoutSeconds"},
		{"riwc name", "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata: {name: w}\nwebhooks:\n- name: workloads\n  clientConfig: {url: \"https://interpreter.example.com/interpret\"}\n  interpreterContextVersions: [v1alpha1]\n", "webhooks[0].name"},
		{"riwc version", riwc + hook + "  interpreterContextVersions: [v1beta1]\n", "webhooks[0].interpreterContextVersions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := decode([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			errs := admissionErrors(t, resources, obj)
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs.ToAggregate())
				}
				return
			}
			for _, e := range errs {
				if e.Field == tc.want {
					return
				}
			}
			t.Fatalf("want an error at %s, got %v", tc.want, errs.ToAggregate())
		})
	}
}

// TestReferenceSamplesPassTheChecks applies every Karmada object of the upstream samples, the
// interpreter customization bundles and the repository's examples through the CRD schemas
// and the plugin's checks: none is refused.
func TestReferenceSamplesPassTheChecks(t *testing.T) {
	resources := resourceOf(t)
	roots := []string{
		reftest.Shared(t, "reference", "karmada-samples"),
		reftest.Shared(t, "reference", "interpreter-customizations"),
		filepath.Join(reftest.ModuleRoot(t), "examples"),
	}
	checked := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) ||
				strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
			for {
				doc, err := reader.Read()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				obj, err := decode(doc)
				if err != nil || obj == nil {
					continue
				}
				apiVersion, _ := obj["apiVersion"].(string)
				kind, _ := obj["kind"].(string)
				gv, err := schema.ParseGroupVersion(apiVersion)
				if err != nil {
					continue
				}
				if _, served := resources[gv.WithKind(kind).GroupKind()]; !served {
					continue
				}
				checked++
				if errs := admissionErrors(t, resources, obj); len(errs) > 0 {
					t.Errorf("%s: %s refused: %v", path, kind, errs.ToAggregate())
				}
			}
		})
		if err != nil {
			t.Fatalf("reading %s: %v", root, err)
		}
	}
	if checked == 0 {
		t.Fatal("found no Karmada objects")
	}
	t.Logf("checked %d Karmada objects", checked)
}
