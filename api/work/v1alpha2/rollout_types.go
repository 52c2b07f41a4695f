package v1alpha2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Progressing is the binding condition of a staged rollout (Flotilla's, set
// only on bindings whose policy names a rollout.flotilla.io strategy), after
// a Deployment's: True while the change moves through the waves and once it
// has reached every cluster, False when the rollout stopped (failures past
// maxFailures, an abort, a missing strategy), Unknown when paused by the
// user.
const Progressing = "Progressing"

// Reasons of the Progressing condition, also the reasons of the events on
// the binding and its template.
const (
	// RolloutProgressing: clusters of the current wave have the change and
	// are becoming or staying Healthy.
	RolloutProgressing = "RolloutProgressing"
	// RolloutPaused: no more clusters are admitted, by the user's pause or
	// because more clusters failed than maxFailures tolerates; the message
	// says which and what to do.
	RolloutPaused = "RolloutPaused"
	// RolloutSucceeded: every target cluster has the change and was
	// Healthy for minSuccessTime (or failed within maxFailures).
	RolloutSucceeded = "RolloutSucceeded"
	// RolloutFailed: the rollout was aborted (the clusters went back to the
	// previous rendering) or its strategy cannot be found.
	RolloutFailed = "RolloutFailed"
)

// Phases of one cluster in RolloutStatus.clusters.
const (
	// ClusterRolloutWaiting: the cluster keeps the previous rendering.
	ClusterRolloutWaiting = "Waiting"
	// ClusterRolloutProgressing: admitted, not yet Healthy for minSuccessTime.
	ClusterRolloutProgressing = "Progressing"
	// ClusterRolloutSucceeded: Healthy for minSuccessTime on the change, or
	// already running it when the rollout started.
	ClusterRolloutSucceeded = "Succeeded"
	// ClusterRolloutFailed: not Healthy within progressDeadline.
	ClusterRolloutFailed = "Failed"
)

// RolloutStatus is Flotilla's record of a staged rollout on a
// ResourceBinding or ClusterResourceBinding: written by the rollout
// controller, read by the binding controller, which gives a cluster a new
// rendering only once its entry here names it.
type RolloutStatus struct {
	// Strategy is the strategy in force: "RolloutStrategy/<name>" (in the
	// binding's namespace) or "ClusterRolloutStrategy/<name>".
	Strategy string `json:"strategy"`

	// Revision identifies the change being rolled out: a digest of every
	// target cluster's wanted rendering. `flotilla rollout abort` names it.
	// +optional
	Revision string `json:"revision,omitempty"`

	// Aborted says the user aborted this revision: clusters that had it
	// went back to their previous rendering and none is admitted.
	// +optional
	Aborted bool `json:"aborted,omitempty"`

	// StartTime is when this revision's rollout started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when it succeeded.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// CurrentWave is the index of the wave in progress (len(waves) when all
	// are through).
	CurrentWave int32 `json:"currentWave"`

	// Waves are the waves in rollout order, with counts.
	// +optional
	Waves []RolloutWave `json:"waves,omitempty"`

	// Clusters are the target clusters, sorted by name.
	// +optional
	Clusters []ClusterRollout `json:"clusters,omitempty"`

	// ObservedRestart, ObservedResume and ObservedAbort are the last
	// rollout.flotilla.io/restart, rollout.flotilla.io/resume and
	// rollout.flotilla.io/abort requests acted on.
	// +optional
	ObservedRestart string `json:"observedRestart,omitempty"`
	// +optional
	ObservedResume string `json:"observedResume,omitempty"`
	// +optional
	ObservedAbort string `json:"observedAbort,omitempty"`
}

// RolloutWave is one wave of clusters and how far it is.
type RolloutWave struct {
	// Name is the wave's group (a label value, an affinityName, a step).
	Name string `json:"name"`
	// Clusters, Succeeded and Failed count its clusters.
	Clusters  int32 `json:"clusters"`
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
}

// ClusterRollout is where one target cluster stands.
type ClusterRollout struct {
	// Name is the cluster.
	Name string `json:"name"`
	// Wave is the index of its wave.
	Wave int32 `json:"wave"`
	// Rendering is the digest of the rendering the cluster is admitted to;
	// empty while it waits.
	// +optional
	Rendering string `json:"rendering,omitempty"`
	// Phase is Waiting, Progressing, Succeeded or Failed.
	Phase string `json:"phase"`
	// AdmittedTime is when it was admitted (the progressDeadline's start).
	// +optional
	AdmittedTime *metav1.Time `json:"admittedTime,omitempty"`
	// HealthySince is when it last became Healthy on the change (the
	// minSuccessTime's start).
	// +optional
	HealthySince *metav1.Time `json:"healthySince,omitempty"`
}
