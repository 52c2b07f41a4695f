package localstack

// AdmissionPlugin is the control plane's decision about one admission plugin
// that kube-apiserver turns on by default.
type AdmissionPlugin struct {
	// Name is the plugin name as --disable-admission-plugins takes it.
	Name string
	// Off turns the plugin off on the control plane (members keep it).
	Off bool
	// Reason says why, in terms of what the plugin would do to a resource
	// template.
	Reason string
}

// ControlPlaneAdmission decides, for every admission plugin kube-apiserver
// 1.37 turns on by default, whether the control plane keeps it. Objects on
// the control plane are resource templates: nothing runs there, and each
// member's own API server admits the copy it receives. A plugin that bakes
// the control plane's values into a template (its default classes, its
// priorities, its service-account token), that refuses a template because
// the control plane lacks something only a member has, or that adds a
// finalizer no controller on the control plane removes, makes templates
// wrong, so it is off here and members keep it.
//
// Karmada turns off ServiceAccount and StorageObjectInUseProtection on
// karmada-apiserver (--disable-admission-plugins in its install manifests,
// Helm chart, operator and karmadactl init); Flotilla turns those off too,
// plus the others marked Off, for the same reason. Flotilla's own
// FlotillaPolicyClaim, FlotillaDefaulting and FlotillaValidation plugins are
// not in this list and stay on. A test in
// package component fails when a kube-apiserver upgrade adds a default-on
// plugin that has no decision here.
var ControlPlaneAdmission = []AdmissionPlugin{
	{Name: "NamespaceLifecycle", Reason: "refuses objects in namespaces that do not exist or are terminating, and protects the system namespaces; right for templates too"},
	{Name: "LimitRanger", Off: true, Reason: "would fill a Pod's requests and limits from the control plane's LimitRanges and refuse it by their bounds; a LimitRange is itself a template whose member copy applies there"},
	{Name: "ServiceAccount", Off: true, Reason: "refuses a Pod whose service account is missing on the control plane (the control plane runs no service-account controller, so a new namespace there has no 'default') and injects a kube-api-access volume that would be propagated; Karmada turns it off"},
	{Name: "TaintNodesByCondition", Off: true, Reason: "taints a new Node not-ready, and no kubelet or node lifecycle controller on the control plane ever lifts it"},
	{Name: "Priority", Off: true, Reason: "would resolve priorityClassName to the control plane's PriorityClass value (or refuse a class that exists only on members), and a member refuses a Pod whose priority disagrees with its own class"},
	{Name: "DefaultTolerationSeconds", Off: true, Reason: "adds not-ready/unreachable tolerations with the control plane's defaults; each member adds its own"},
	{Name: "DefaultStorageClass", Off: true, Reason: "would write the control plane's default StorageClass into a PersistentVolumeClaim; each member picks its own default"},
	{Name: "StorageObjectInUseProtection", Off: true, Reason: "adds pvc-protection/pv-protection finalizers that no controller on the control plane removes, so deleting the template would hang; Karmada turns it off"},
	{Name: "PodGroupProtection", Off: true, Reason: "adds a finalizer to PodGroups that no controller on the control plane removes (only acts with the GenericWorkload feature gate)"},
	{Name: "PersistentVolumeClaimResize", Off: true, Reason: "refuses growing a claim unless the control plane holds an expandable StorageClass for it; the members' StorageClasses decide"},
	{Name: "RuntimeClass", Off: true, Reason: "would copy the control plane's RuntimeClass overhead and scheduling into a Pod, or refuse a class that exists only on members"},
	{Name: "DefaultIngressClass", Off: true, Reason: "would write the control plane's default IngressClass into an Ingress; each member picks its own default"},
	{Name: "PodTopologyLabels", Off: true, Reason: "copies topology labels of the control plane's Node named in spec.nodeName into a Pod; only a member's nodes have meaning"},
	{Name: "NodeDeclaredFeatureValidator", Off: true, Reason: "checks a Pod update against the features of the control plane's Node named in spec.nodeName, which does not exist there"},
	{Name: "PodResizeValidator", Off: true, Reason: "checks a Pod resize against the control plane's Node named in spec.nodeName, which does not exist there"},
	{Name: "PodSecurity", Reason: "only validates, by the namespace's pod-security labels, which propagate with the namespace; refusing early what the members would refuse is right"},
	{Name: "CertificateApproval", Reason: "authorizes approving CertificateSigningRequests, which act on the control plane itself (agent registration); not templates"},
	{Name: "CertificateSigning", Reason: "authorizes signing CertificateSigningRequests on the control plane itself; not templates"},
	{Name: "ClusterTrustBundleAttest", Reason: "authorizes writing ClusterTrustBundles for a signer; no change to any template"},
	{Name: "CertificateSubjectRestriction", Reason: "refuses client CSRs for system:masters; security of the control plane itself"},
	{Name: "MutatingAdmissionPolicy", Reason: "runs only the policies users create on the control plane"},
	{Name: "MutatingAdmissionWebhook", Reason: "calls only the webhooks users register on the control plane"},
	{Name: "ValidatingAdmissionPolicy", Reason: "runs only the policies users create on the control plane"},
	{Name: "ValidatingAdmissionWebhook", Reason: "calls only the webhooks users register on the control plane"},
	{Name: "ResourceQuota", Reason: "enforces a ResourceQuota only once a quota controller has set its status.hard; the control plane runs none, so quotas there (templates for members) never restrict templates"},
}

// ControlPlaneDisabledAdmissionPlugins returns the names of the plugins
// ControlPlaneAdmission turns off, in its order: the value of the control
// plane's --disable-admission-plugins.
func ControlPlaneDisabledAdmissionPlugins() []string {
	var off []string
	for _, p := range ControlPlaneAdmission {
		if p.Off {
			off = append(off, p.Name)
		}
	}
	return off
}

// AdmissionClaimPlugin is the name of Flotilla's own admission plugin in the
// control plane (claim.PluginName): it claims new templates for
// their policy. It is on unless Config.NoAdmissionClaim.
const AdmissionClaimPlugin = "FlotillaPolicyClaim"
