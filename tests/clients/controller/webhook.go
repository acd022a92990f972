package controller

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// DefaultColor is the color the defaulting webhook gives a Widget whose data has none.
const DefaultColor = "white"

// WidgetWebhook defaults and validates Widgets (webhook/manifests.yaml registers it).
type WidgetWebhook struct{}

// SetupWithManager serves the webhook on the manager's webhook server.
func (h WidgetWebhook) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &Widget{}).WithDefaulter(h).WithValidator(h).Complete()
}

// Default gives the Widget a color when it has none.
func (WidgetWebhook) Default(_ context.Context, w *Widget) error {
	if _, ok := w.Spec.Data["color"]; !ok {
		if w.Spec.Data == nil {
			w.Spec.Data = map[string]string{}
		}
		w.Spec.Data["color"] = DefaultColor
	}
	return nil
}

// ValidateCreate refuses a child name in the kube- prefix.
func (WidgetWebhook) ValidateCreate(_ context.Context, w *Widget) (admission.Warnings, error) {
	return nil, validate(w)
}

// ValidateUpdate refuses a child name in the kube- prefix.
func (WidgetWebhook) ValidateUpdate(_ context.Context, _, w *Widget) (admission.Warnings, error) {
	return nil, validate(w)
}

// ValidateDelete allows every delete.
func (WidgetWebhook) ValidateDelete(context.Context, *Widget) (admission.Warnings, error) {
	return nil, nil
}

func validate(w *Widget) error {
	if !strings.HasPrefix(w.Spec.ConfigMapName, "kube-") {
		return nil
	}
	path := field.NewPath("spec", "configMapName")
	return apierrors.NewInvalid(GroupVersion.WithKind("Widget").GroupKind(), w.Name,
		field.ErrorList{field.Invalid(path, w.Spec.ConfigMapName, "must not start with kube-")})
}
