/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Ported from k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/replica_calculator.go
// (groupPods, calculateRequests, calculatePodLevelRequests, calculatePodRequestsFromContainers,
// removeMetricsForPods). Changes for Flotilla: pods come from several member clusters and are
// keyed by PodKey(cluster, name); metrics a client keyed by bare pod name are matched to those
// keys (keyByPod); the clock is passed in; pod-level requests are used whenever a pod sets them
// (the PodLevelResources gate is on by default since Kubernetes 1.34, and a member that lacks it
// reports no pod-level requests).

package hpa

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelpers "k8s.io/component-helpers/resource"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
)

// Pod is one pod of the scaled workload, as the member cluster that runs it reports it.
type Pod struct {
	// Cluster is the name of the member cluster (its Cluster object) the pod runs in.
	Cluster string
	// Pod is the pod as the member's API server holds it; never nil, and read only.
	Pod *corev1.Pod
}

// Key returns the pod's PodKey.
func (p Pod) Key() string { return PodKey(p.Cluster, p.Pod.Name) }

// PodKey returns "<cluster>/<pod name>", the key under which a pod's metric is looked up in a
// metricsclient.PodMetricsInfo. Pod names cannot contain "/", so the key is unambiguous; two
// clusters may well run pods of the same name (a StatefulSet's web-0 in each).
func PodKey(cluster, name string) string { return cluster + "/" + name }

// keyByPod returns metrics with every entry under the PodKey of the pod it belongs to. An entry
// already keyed by a PodKey stays. An entry keyed by a bare pod name (a metrics client that
// cannot tell clusters apart, such as Kubernetes' REST client on an adapter that merged the
// members' answers) is given to every pod of that name: with one cluster per name, which is
// the usual case, that is exact; with several, each gets the one value the client kept. An
// entry that matches no pod stays under its key: the HPA counts such superfluous samples in a
// plain metric's average.
func keyByPod(metrics metricsclient.PodMetricsInfo, pods []Pod) metricsclient.PodMetricsInfo {
	byName := make(map[string][]string, len(pods))
	for _, p := range pods {
		byName[p.Pod.Name] = append(byName[p.Pod.Name], p.Key())
	}
	out := make(metricsclient.PodMetricsInfo, len(metrics))
	for key, m := range metrics {
		if keys, bare := byName[key]; bare {
			for _, k := range keys {
				if _, exact := metrics[k]; !exact {
					out[k] = m
				}
			}
			continue
		}
		out[key] = m
	}
	return out
}

// groupPods sorts pods into ready, unready, missing (no metric) and ignored (deleted or
// failed) ones, as the HPA does. For CPU, a pod is also unready while its samples cannot be
// trusted yet: within cpuInitializationPeriod of its start unless it is Ready and its sample
// was taken a full window after it became Ready, and afterwards if it is unready and never
// became ready within delayOfInitialReadinessStatus of its start.
func groupPods(pods []Pod, metrics metricsclient.PodMetricsInfo, resource corev1.ResourceName, cpuInitializationPeriod, delayOfInitialReadinessStatus time.Duration, now time.Time) (readyPodCount int, unreadyPods, missingPods, ignoredPods sets.Set[string]) {
	missingPods = sets.New[string]()
	unreadyPods = sets.New[string]()
	ignoredPods = sets.New[string]()
	for _, p := range pods {
		pod, key := p.Pod, p.Key()
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignoredPods.Insert(key)
			continue
		}
		// Pending pods are ignored.
		if pod.Status.Phase == corev1.PodPending {
			unreadyPods.Insert(key)
			continue
		}
		// Pods missing metrics.
		metric, found := metrics[key]
		if !found {
			missingPods.Insert(key)
			continue
		}
		// Unready pods are ignored.
		if resource == corev1.ResourceCPU {
			var unready bool
			_, condition := podutil.GetPodCondition(&pod.Status, corev1.PodReady)
			if condition == nil || pod.Status.StartTime == nil {
				unready = true
			} else {
				// Pod still within possible initialisation period.
				if pod.Status.StartTime.Add(cpuInitializationPeriod).After(now) {
					// Ignore sample if pod is unready or one window of metric wasn't collected since last state transition.
					unready = condition.Status == corev1.ConditionFalse || metric.Timestamp.Before(condition.LastTransitionTime.Time.Add(metric.Window))
				} else {
					// Ignore metric if pod is unready and it has never been ready.
					unready = condition.Status == corev1.ConditionFalse && pod.Status.StartTime.Add(delayOfInitialReadinessStatus).After(condition.LastTransitionTime.Time)
				}
			}
			if unready {
				unreadyPods.Insert(key)
				continue
			}
		}
		readyPodCount++
	}
	return
}

// calculateRequests returns each pod's request of resource, in milli-units, by PodKey: the
// named container's request when container is set, else the pod-level request when the pod
// sets one, else the sum over its containers (restartable init containers included). A pod
// without the request is an error, as for the HPA: utilization cannot be computed.
func calculateRequests(pods []Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, p := range pods {
		var request int64
		var err error
		// A container named in the metric takes precedence over pod-level requests.
		if container == "" && resourcehelpers.IsPodLevelRequestsSet(p.Pod) {
			request, err = calculatePodLevelRequests(p, resource)
		} else {
			request, err = calculatePodRequestsFromContainers(p, container, resource)
		}
		if err != nil {
			return nil, err
		}
		requests[p.Key()] = request
	}
	return requests, nil
}

// calculatePodLevelRequests returns the pod-level request of resource, in milli-units.
func calculatePodLevelRequests(p Pod, resource corev1.ResourceName) (int64, error) {
	podLevelRequests := resourcehelpers.PodRequests(p.Pod, resourcehelpers.PodResourcesOptions{})
	podRequest, ok := podLevelRequests[resource]
	if !ok {
		return 0, fmt.Errorf("missing pod-level request for %s in Pod %s of cluster %s", resource, p.Pod.Name, p.Cluster)
	}
	return podRequest.MilliValue(), nil
}

// calculatePodRequestsFromContainers sums the containers' requests of resource, or returns
// the named container's, in milli-units.
func calculatePodRequestsFromContainers(p Pod, container string, resource corev1.ResourceName) (int64, error) {
	pod := p.Pod
	containers := append([]corev1.Container{}, pod.Spec.Containers...)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}

	request := int64(0)
	for _, c := range containers {
		if container == "" || container == c.Name {
			containerRequest, ok := c.Resources.Requests[resource]
			if !ok {
				return 0, fmt.Errorf("missing request for %s in container %s of Pod %s of cluster %s", resource, c.Name, pod.Name, p.Cluster)
			}
			request += containerRequest.MilliValue()
		}
		// container names are unique inside the pod
		if container == c.Name {
			return request, nil
		}
	}

	if container != "" {
		return 0, fmt.Errorf("container %s not found in Pod %s of cluster %s", container, pod.Name, p.Cluster)
	}
	return request, nil
}

// removeMetricsForPods deletes the metrics of the given pod keys.
func removeMetricsForPods(metrics metricsclient.PodMetricsInfo, pods sets.Set[string]) {
	for _, pod := range pods.UnsortedList() {
		delete(metrics, pod)
	}
}

// countReadyPods counts the running, Ready pods, the HPA's basis for Object and External
// Value targets. It is an error when there are no pods at all.
func countReadyPods(pods []Pod) (int64, error) {
	if len(pods) == 0 {
		return 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	var n int64
	for _, p := range pods {
		if p.Pod.Status.Phase == corev1.PodRunning && podutil.IsPodReady(p.Pod) {
			n++
		}
	}
	return n, nil
}
