package v1alpha2

// Deletion protection (Karmada's resourcedeletionprotection webhook): any
// object on the control plane labelled DeletionProtectionLabelKey with the
// value DeletionProtectionAlways cannot be deleted until the label is
// removed or changed. Any other value protects nothing.
const (
	// DeletionProtectionLabelKey is the label that protects an object.
	DeletionProtectionLabelKey = "resourcetemplate.karmada.io/deletion-protected"
	// DeletionProtectionAlways is the only value that protects.
	DeletionProtectionAlways = "Always"
)
