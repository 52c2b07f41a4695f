package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Binding is what ResourceBinding and ClusterResourceBinding have in common:
// the same spec and status types, reached through accessors, so that one
// generic core serves both twins without type switches.
type Binding interface {
	metav1.Object
	runtime.Object
	// GetSpec returns the binding's spec, for reading and writing in place.
	GetSpec() *ResourceBindingSpec
	// GetStatus returns the binding's status, for reading and writing in place.
	GetStatus() *ResourceBindingStatus
}

// GetSpec returns the ResourceBinding's spec.
func (b *ResourceBinding) GetSpec() *ResourceBindingSpec { return &b.Spec }

// GetStatus returns the ResourceBinding's status.
func (b *ResourceBinding) GetStatus() *ResourceBindingStatus { return &b.Status }

// GetSpec returns the ClusterResourceBinding's spec.
func (b *ClusterResourceBinding) GetSpec() *ResourceBindingSpec { return &b.Spec }

// GetStatus returns the ClusterResourceBinding's status.
func (b *ClusterResourceBinding) GetStatus() *ResourceBindingStatus { return &b.Status }

var (
	_ Binding = &ResourceBinding{}
	_ Binding = &ClusterResourceBinding{}
)
