package native

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// Dependency is an object, or a set of objects, a template refers to, in
// the template's namespace (Karmada's DependentObjectReference).
type Dependency struct {
	// APIVersion is the dependency's group/version; empty means v1 (the
	// core kinds: ConfigMap, Secret, ServiceAccount, PersistentVolumeClaim,
	// Service).
	APIVersion string
	Kind       string
	// Namespace is where the dependency lives; empty means the template's
	// namespace (the only one built-in rules produce).
	Namespace string
	// Name names one object. Empty with Selector set: every object of Kind
	// whose labels match Selector.
	Name string
	// Selector is a label selector in its string form ("k=v"), for a
	// dependency on a set of objects (Name empty).
	Selector string
}

// GroupVersionKind of the dependency.
func (d Dependency) GroupVersionKind() schema.GroupVersionKind {
	if d.APIVersion == "" {
		return corev1.SchemeGroupVersion.WithKind(d.Kind)
	}
	return schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)
}

// NewDependency is the dependency a customization or a webhook reports as
// Karmada's DependentObjectReference: kind and apiVersion, and a name or a
// label selector. apiVersion "v1" is stored empty, as the built-in rules do.
func NewDependency(apiVersion, kind, namespace, name string, selector *metav1.LabelSelector) (Dependency, error) {
	if kind == "" || apiVersion == "" {
		return Dependency{}, fmt.Errorf("a dependency needs an apiVersion and a kind")
	}
	d := Dependency{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	if d.APIVersion == "v1" {
		d.APIVersion = ""
	}
	if name == "" {
		if selector == nil {
			return Dependency{}, fmt.Errorf("dependency %s has neither a name nor a labelSelector", kind)
		}
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return Dependency{}, fmt.Errorf("dependency %s: %w", kind, err)
		}
		d.Selector = sel.String()
	}
	return d, nil
}

func (d Dependency) String() string {
	if d.Name == "" {
		return d.Kind + "s with labels " + d.Selector
	}
	return d.Kind + " " + d.Name
}

// podSpecPaths says where each workload kind keeps its pod spec: the kinds
// whose dependencies Karmada's propagateDeps follows.
var podSpecPaths = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template", "spec"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template", "spec"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template", "spec"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template", "spec"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template", "spec"},
	{Kind: "Pod"}:                        {"spec"},
}

// IsWorkload reports whether gk is a kind whose pod template Dependencies reads.
func IsWorkload(gk schema.GroupKind) bool { _, ok := podSpecPaths[gk]; return ok }

// HasDependencies reports whether Dependencies reads objects of gk: the workloads (IsWorkload)
// and ServiceImports. Objects of other kinds have none.
func HasDependencies(gk schema.GroupKind) bool {
	return IsWorkload(gk) || gk == mcs.ServiceImportGVK.GroupKind()
}

// serviceImportDependencies are a ServiceImport's: its derived Service (not
// for a Headless import, which has none) and the EndpointSlices labelled
// kubernetes.io/service-name=derived-<name>.
func serviceImportDependencies(imp *unstructured.Unstructured) []Dependency {
	derived := mcs.DerivedServiceName(imp.GetName())
	slices := Dependency{APIVersion: mcs.EndpointSliceGVK.GroupVersion().String(), Kind: mcs.EndpointSliceGVK.Kind, Selector: mcs.ServiceNameLabel + "=" + derived}
	if t, _, _ := unstructured.NestedString(imp.Object, "spec", "type"); t == "Headless" {
		return []Dependency{slices} // no derived Service: a Headless import has no virtual IP
	}
	return []Dependency{{Kind: "Service", Name: derived}, slices}
}

// Dependencies lists what workload's pod template refers to, sorted by kind
// and name, each once: ConfigMaps and Secrets from volumes (also inside
// projected volumes), env valueFrom and envFrom of every container, init and
// ephemeral container; Secrets from imagePullSecrets; PersistentVolumeClaims
// from volumes; the ServiceAccount from serviceAccountName unless it is
// "default" (every namespace has its own, made by its cluster); and a
// StatefulSet's serviceName Service. A ServiceImport's are its derived
// Service and imported EndpointSlices. Optional references are listed too:
// whether they exist is for the caller to find out. A kind that is not a
// workload has none; a pod spec that does not decode is an error.
func Dependencies(workload *unstructured.Unstructured) ([]Dependency, error) {
	gk := workload.GroupVersionKind().GroupKind()
	if gk == mcs.ServiceImportGVK.GroupKind() {
		return serviceImportDependencies(workload), nil
	}
	path, ok := podSpecPaths[gk]
	if !ok {
		return nil, nil
	}
	raw, found, err := unstructured.NestedMap(workload.Object, path...)
	if err != nil || !found {
		return nil, err
	}
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("read the pod template of %s %s: %w", workload.GetKind(), workload.GetName(), err)
	}
	deps := PodSpecDependencies(&spec)
	if gk == (schema.GroupKind{Group: "apps", Kind: "StatefulSet"}) {
		if svc, _, _ := unstructured.NestedString(workload.Object, "spec", "serviceName"); svc != "" {
			deps = append(deps, Dependency{Kind: "Service", Name: svc})
			sortDependencies(deps)
		}
	}
	return deps, nil
}

// PodSpecDependencies lists what a pod spec refers to, sorted by kind and
// name, each once (see Dependencies). It is the kube.getPodDependencies of
// the Lua library.
func PodSpecDependencies(spec *corev1.PodSpec) []Dependency {
	set := map[Dependency]bool{}
	add := func(kind, name string) {
		if name != "" {
			set[Dependency{Kind: kind, Name: name}] = true
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add("ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil:
			add("Secret", v.Secret.SecretName)
		case v.PersistentVolumeClaim != nil:
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add("ConfigMap", s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add("Secret", s.Secret.Name)
				}
			}
		}
	}
	envs := func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("ConfigMap", r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("Secret", r.Name)
			}
		}
		for _, f := range from {
			if f.ConfigMapRef != nil {
				add("ConfigMap", f.ConfigMapRef.Name)
			}
			if f.SecretRef != nil {
				add("Secret", f.SecretRef.Name)
			}
		}
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		envs(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		envs(c.Env, c.EnvFrom)
	}
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = spec.DeprecatedServiceAccount
	}
	if sa != "default" {
		add("ServiceAccount", sa)
	}
	out := make([]Dependency, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sortDependencies(out)
	return out
}

func sortDependencies(out []Dependency) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
}
