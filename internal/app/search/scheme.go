package search

import (
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// The search API server's scheme: search.karmada.io/v1alpha1, whose Go types
// double as the internal version (there is one version, so nothing converts).
var (
	scheme         = runtime.NewScheme()
	codecs         = serializer.NewCodecFactory(scheme)
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	utilruntime.Must(searchv1alpha1.AddToScheme(scheme))
	internal := schema.GroupVersion{Group: searchv1alpha1.GroupName, Version: runtime.APIVersionInternal}
	scheme.AddKnownTypes(internal,
		&searchv1alpha1.ResourceRegistry{},
		&searchv1alpha1.ResourceRegistryList{},
		&searchv1alpha1.Search{},
		&searchv1alpha1.Proxying{},
	)
	utilruntime.Must(internalversion.AddToScheme(scheme))
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}
