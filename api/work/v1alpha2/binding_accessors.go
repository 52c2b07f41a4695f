package v1alpha2

// ResourceBinding and ClusterResourceBinding have the same spec and status
// types; these accessors let one generic core serve both twins without type
// switches (internal/model/binding.Object).

// GetSpec returns the ResourceBinding's spec, for reading and writing in place.
func (b *ResourceBinding) GetSpec() *ResourceBindingSpec { return &b.Spec }

// GetStatus returns the ResourceBinding's status, for reading and writing in place.
func (b *ResourceBinding) GetStatus() *ResourceBindingStatus { return &b.Status }

// GetSpec returns the ClusterResourceBinding's spec, for reading and writing in place.
func (b *ClusterResourceBinding) GetSpec() *ResourceBindingSpec { return &b.Spec }

// GetStatus returns the ClusterResourceBinding's status, for reading and writing in place.
func (b *ClusterResourceBinding) GetStatus() *ResourceBindingStatus { return &b.Status }
