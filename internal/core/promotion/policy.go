package promotion

import (
	"fmt"
	"hash/fnv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	hashutil "k8s.io/kubernetes/pkg/util/hash"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// PolicyName is the name `karmadactl promote` gives the policy it creates
// for the object name of kind gvk in namespace ("" for a cluster-scoped
// object): the object's name, a dash and a hash of the namespace and the
// group, version and kind, lowercased (Karmada's names.GeneratePolicyName).
// Two kinds with an object of the same name therefore get two policies
// ("web-<hash of Deployment>", "web-<hash of Service>"). A ':' in the name
// (ClusterRoles such as system:foo) becomes '.', which a policy name
// allows. A name too long for a DNS subdomain is cut, keeping the hash.
func PolicyName(namespace, name string, gvk schema.GroupVersionKind) string {
	h := fnv.New32a()
	hashutil.DeepHashObject(h, namespace+gvk.String())
	suffix := "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	name = strings.ReplaceAll(name, ":", ".")
	if max := validation.DNS1123SubdomainMaxLength - len(suffix); len(name) > max {
		name = strings.TrimRight(name[:max], ".-")
	}
	return strings.ToLower(name + suffix)
}

// Target is one promoted object as its policy selects it.
type Target struct {
	APIVersion, Kind, Namespace, Name string
	// Deps makes the policy propagate the target's dependencies with it
	// (spec.propagateDeps), as karmadactl promote --dependencies writes it.
	Deps bool
}

// PropagationPolicy returns the policy that places target, a namespaced
// template, on cluster and adopts the member's copy (conflictResolution
// Overwrite), keeping it there should the template be deleted
// (preserveResourcesOnDeletion), named name in the target's namespace, as
// karmadactl promote writes it.
func PropagationPolicy(name, cluster string, target Target) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.SchemeGroupVersion.String(), Kind: "PropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: target.Namespace},
		Spec:       spec(cluster, target),
	}
}

// ClusterPropagationPolicy is PropagationPolicy for a cluster-scoped template.
func ClusterPropagationPolicy(name, cluster string, target Target) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterPropagationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec(cluster, target),
	}
}

func spec(cluster string, t Target) policyv1alpha1.PropagationSpec {
	return policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: t.APIVersion, Kind: t.Kind, Name: t.Name}},
		Placement: policyv1alpha1.Placement{
			ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}},
		},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
		PropagateDeps:      t.Deps,
		// As karmadactl promote: deleting the promoted template later leaves the object
		// running in the member, where it came from.
		PreserveResourcesOnDeletion: ptr.To(true),
	}
}
