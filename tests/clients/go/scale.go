package main

import (
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/disk"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/utils/ptr"
)

// stepScale: the polymorphic scale client (as the HPA controller uses it) on a Deployment and a
// StatefulSet, found through a disk-cached discovery client (as kubectl's) and a RESTMapper.
func stepScale(e *env, step string) {
	dir, err := os.MkdirTemp("", "clientgo-discovery")
	check(err, "temp dir")
	defer os.RemoveAll(dir)
	cached, err := disk.NewCachedDiscoveryClientForConfig(e.config, filepath.Join(dir, "discovery"), filepath.Join(dir, "http"), time.Minute)
	check(err, "disk cached discovery client")
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	scales, err := scale.NewForConfig(e.config, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
	check(err, "scale client")

	labels := map[string]string{"app": "cg-scale"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	_, err = e.cs.AppsV1().Deployments(e.ns).Create(e.ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-scale"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template},
	}, metav1.CreateOptions{})
	check(err, "create deployment")
	_, err = e.cs.AppsV1().StatefulSets(e.ns).Create(e.ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-scale"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template, ServiceName: "cg-scale"},
	}, metav1.CreateOptions{})
	check(err, "create statefulset")
	for _, gr := range []schema.GroupResource{{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "statefulsets"}} {
		s, err := scales.Scales(e.ns).Get(e.ctx, gr, "cg-scale", metav1.GetOptions{})
		check(err, "get the scale of %v", gr)
		if s.Spec.Replicas != 1 || s.Status.Selector == "" {
			fail("the scale of %v: %+v", gr, s)
		}
		s.Spec.Replicas = 3
		s, err = scales.Scales(e.ns).Update(e.ctx, gr, s, metav1.UpdateOptions{})
		check(err, "update the scale of %v", gr)
		if s.Spec.Replicas != 3 {
			fail("the updated scale of %v: %+v", gr, s.Spec)
		}
		gvr := schema.GroupVersionResource{Group: gr.Group, Version: "v1", Resource: gr.Resource}
		s, err = scales.Scales(e.ns).Patch(e.ctx, gvr, "cg-scale", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
		check(err, "patch the scale of %v", gr)
		if s.Spec.Replicas != 5 {
			fail("the patched scale of %v: %+v", gr, s.Spec)
		}
	}
	d, err := e.cs.AppsV1().Deployments(e.ns).Get(e.ctx, "cg-scale", metav1.GetOptions{})
	check(err, "get deployment")
	if *d.Spec.Replicas != 5 {
		fail("the deployment has %d replicas after the scale patch", *d.Spec.Replicas)
	}

	// Legacy (unaggregated) discovery, and OpenAPI v3 parsed into kube-openapi's spec3 types.
	legacy := discovery.NewDiscoveryClientForConfigOrDie(e.config).WithLegacy()
	resources, err := legacy.ServerResourcesForGroupVersion("apps/v1")
	check(err, "legacy discovery of apps/v1")
	found := false
	for _, r := range resources.APIResources {
		found = found || r.Name == "statefulsets/scale" && r.Kind == "Scale" && r.Group == "autoscaling"
	}
	if !found {
		fail("legacy apps/v1 discovery lacks statefulsets/scale (autoscaling Scale): %+v", resources.APIResources)
	}
	root := openapi3.NewRoot(discovery.NewDiscoveryClientForConfigOrDie(e.config).OpenAPIV3())
	gvs, err := root.GroupVersions()
	check(err, "OpenAPI v3 group versions")
	spec, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	check(err, "OpenAPI v3 apps/v1 parsed")
	deployment := spec.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if deployment == nil || len(deployment.Properties) == 0 {
		fail("the parsed apps/v1 document's Deployment: %+v", deployment)
	}
	if spec.Paths == nil || spec.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"] == nil {
		fail("the parsed apps/v1 document lacks the deployments' scale path")
	}
	e.out(step, "scale client get/update/patch on deployments and statefulsets (disk-cached discovery); legacy discovery; OpenAPI v3 of %d group versions, apps/v1 parsed", len(gvs))
}
