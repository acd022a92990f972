// Package controller is a small controller-runtime controller: a Widget (example.protokube.dev/v1,
// crd/widgets.yaml) is reconciled into a child ConfigMap it controls, and its status says so; its
// webhooks (webhook/manifests.yaml) default and validate Widgets. Its envtest suite runs against an
// existing server: KUBECONFIG=<a protokube admin kubeconfig> go test -v . (here, in this folder);
// tests/gateway/test_controller_runtime.py builds it and runs it against a started protokube.
package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupVersion is the Widget's API group and version.
var GroupVersion = schema.GroupVersion{Group: "example.protokube.dev", Version: "v1"}

// AddToScheme registers Widget and WidgetList.
var AddToScheme = (&scheme.Builder{GroupVersion: GroupVersion}).Register(&Widget{}, &WidgetList{}).AddToScheme

// WidgetSpec is what the user wants: a ConfigMap with this data.
type WidgetSpec struct {
	ConfigMapName string            `json:"configMapName,omitempty"`
	Data          map[string]string `json:"data,omitempty"`
}

// WidgetStatus is what the controller last did.
type WidgetStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	ConfigMapName      string             `json:"configMapName,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Widget is the custom resource.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// ChildName is the name of the ConfigMap the Widget wants.
func (w *Widget) ChildName() string {
	if w.Spec.ConfigMapName != "" {
		return w.Spec.ConfigMapName
	}
	return w.Name
}

// DeepCopyInto copies w into out.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Data != nil {
		out.Spec.Data = make(map[string]string, len(w.Spec.Data))
		for k, v := range w.Spec.Data {
			out.Spec.Data[k] = v
		}
	}
	if w.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
		for i := range w.Status.Conditions {
			w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a copy of w.
func (w *Widget) DeepCopy() *Widget {
	out := &Widget{}
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	return w.DeepCopy()
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
