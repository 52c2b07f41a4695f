package native

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// healthRule judges one member object; an error means it could not be judged.
type healthRule func(obj *unstructured.Unstructured) (bool, error)

var healthRules = map[schema.GroupKind]healthRule{
	deploymentKind:  deploymentHealthy,
	statefulSetKind: statefulSetHealthy,
	replicaSetKind:  replicaSetHealthy,
	daemonSetKind:   daemonSetHealthy,
	serviceKind:     serviceHealthy,
	ingressKind:     ingressHealthy,
	pvcKind:         pvcHealthy,
	podKind:         podHealthy,
	pdbKind:         pdbHealthy,
}

// HasHealthRule reports whether InterpretHealth judges objects of gk (the kinds listed on it);
// objects of other kinds are Healthy without being judged.
func HasHealthRule(gk schema.GroupKind) bool { _, ok := healthRules[gk]; return ok }

// InterpretHealth implements Karmada's InterpretHealth operation on an object observed in a
// member cluster, for Work.status.manifestStatuses[].health:
//   - Deployment: the controller has observed the current generation, every desired replica
//     is updated, and every updated replica is available;
//   - StatefulSet: likewise, counting only the ordinals at or above a rolling-update partition
//     as needing the update, and requiring every desired replica to be available;
//   - ReplicaSet: current generation observed and every desired replica available;
//   - DaemonSet: current generation observed, every desired pod updated and every updated pod
//     available;
//   - Service: any type but LoadBalancer, or a load balancer ingress with an IP or hostname;
//   - Ingress: a load balancer ingress with an IP or hostname;
//   - PersistentVolumeClaim: phase Bound;
//   - Pod: phase Succeeded, or Running with the Ready condition True;
//   - PodDisruptionBudget: currentHealthy >= desiredHealthy.
//
// Kinds without a rule are Healthy, as Karmada treats a kind it has no health check for. The
// result is Unknown when obj is nil or cannot be read as its kind's type (Karmada's answer when
// interpretation fails).
func InterpretHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	if obj == nil {
		return workv1alpha1.ResourceUnknown
	}
	rule, ok := healthRules[groupKindOf(obj)]
	if !ok {
		return workv1alpha1.ResourceHealthy
	}
	healthy, err := rule(obj)
	switch {
	case err != nil:
		return workv1alpha1.ResourceUnknown
	case healthy:
		return workv1alpha1.ResourceHealthy
	default:
		return workv1alpha1.ResourceUnhealthy
	}
}

func toTyped(obj *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
}

// desired returns the replica count a member object asks for; the API server defaults it to 1.
func desired(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

// deploymentHealthy reads the few fields it needs in place: it runs on every
// member status report, and converting the whole object to a typed
// Deployment was a tenth of the execution controller's CPU.
func deploymentHealthy(obj *unstructured.Unstructured) (bool, error) {
	want := int64(1) // the API server's default
	if spec, ok := obj.Object["spec"].(map[string]any); ok {
		if v, found := spec["replicas"]; found {
			n, ok := asInt64(v)
			if !ok {
				return false, fmt.Errorf("spec.replicas is %v, not an integer", v)
			}
			want = n
		}
	}
	status, _ := obj.Object["status"].(map[string]any)
	var n [3]int64
	for i, k := range []string{observedGenerationKey, "updatedReplicas", "availableReplicas"} {
		if v, found := status[k]; found {
			var ok bool
			if n[i], ok = asInt64(v); !ok {
				return false, fmt.Errorf("status.%s is %v, not an integer", k, v)
			}
		}
	}
	observed, updated, available := n[0], n[1], n[2]
	return observed == obj.GetGeneration() && updated >= want && available >= updated, nil
}

func statefulSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	sts := &appsv1.StatefulSet{}
	if err := toTyped(obj, sts); err != nil {
		return false, err
	}
	s := sts.Status
	want := desired(sts.Spec.Replicas)
	wantUpdated := want
	// A partitioned rolling update only moves the ordinals at or above the partition.
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		wantUpdated -= *ru.Partition
	}
	return s.ObservedGeneration == sts.Generation &&
		s.UpdatedReplicas >= wantUpdated &&
		s.AvailableReplicas >= want &&
		s.AvailableReplicas >= s.UpdatedReplicas, nil
}

func replicaSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	rs := &appsv1.ReplicaSet{}
	if err := toTyped(obj, rs); err != nil {
		return false, err
	}
	return rs.Status.ObservedGeneration == rs.Generation &&
		rs.Status.AvailableReplicas >= desired(rs.Spec.Replicas), nil
}

func daemonSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	ds := &appsv1.DaemonSet{}
	if err := toTyped(obj, ds); err != nil {
		return false, err
	}
	s := ds.Status
	return s.ObservedGeneration == ds.Generation &&
		s.UpdatedNumberScheduled >= s.DesiredNumberScheduled &&
		s.NumberAvailable >= s.UpdatedNumberScheduled, nil
}

func serviceHealthy(obj *unstructured.Unstructured) (bool, error) {
	svc := &corev1.Service{}
	if err := toTyped(obj, svc); err != nil {
		return false, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return true, nil
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" || in.Hostname != "" {
			return true, nil
		}
	}
	return false, nil
}

func ingressHealthy(obj *unstructured.Unstructured) (bool, error) {
	ing := &networkingv1.Ingress{}
	if err := toTyped(obj, ing); err != nil {
		return false, err
	}
	for _, in := range ing.Status.LoadBalancer.Ingress {
		if in.IP != "" || in.Hostname != "" {
			return true, nil
		}
	}
	return false, nil
}

func pvcHealthy(obj *unstructured.Unstructured) (bool, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := toTyped(obj, pvc); err != nil {
		return false, err
	}
	return pvc.Status.Phase == corev1.ClaimBound, nil
}

func podHealthy(obj *unstructured.Unstructured) (bool, error) {
	pod := &corev1.Pod{}
	if err := toTyped(obj, pod); err != nil {
		return false, err
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return true, nil
	case corev1.PodRunning:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
	}
	return false, nil
}

func pdbHealthy(obj *unstructured.Unstructured) (bool, error) {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := toTyped(obj, pdb); err != nil {
		return false, err
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy, nil
}
