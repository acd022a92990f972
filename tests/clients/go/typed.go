package main

import (
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// stepTyped: create/get/update/patch/delete of ConfigMaps, Pods, a Deployment, a Service and a
// Secret through the typed clientset, with the error helpers on 404/409.
func stepTyped(e *env, step string) {
	mark := e.rec.mark()
	typedConfigMaps(e, step)
	typedPods(e, step)
	typedDeployment(e, step)
	typedService(e, step)
	typedSecret(e, step)
	// Every request's body and every answer (but DELETE's Status) in the configured content type.
	for _, x := range e.rec.since(mark) {
		if x.contentType != "" && !strings.HasPrefix(x.contentType, e.contentType) && !strings.HasPrefix(x.contentType, "application/") {
			fail("%s %s sent %q", x.method, x.url, x.contentType)
		}
		if (x.method == "GET" || x.method == "POST" || x.method == "PUT") && strings.HasPrefix(x.status, "2") &&
			!strings.HasPrefix(x.responseType, e.contentType) {
			fail("%s %s answered %q, not %s", x.method, x.url, x.responseType, e.contentType)
		}
	}
}

func typedConfigMaps(e *env, step string) {
	c := e.cs.CoreV1().ConfigMaps(e.ns)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-cm", Labels: map[string]string{"app": "cg"}, Annotations: map[string]string{"a": "1"}},
		Data:       map[string]string{"k1": "v1", "k2": "v2"},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 255}},
	}
	created, err := c.Create(e.ctx, cm, metav1.CreateOptions{})
	check(err, "create configmap")
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		fail("created configmap lacks uid/resourceVersion/creationTimestamp: %+v", created.ObjectMeta)
	}
	if !reflect.DeepEqual(created.Data, cm.Data) || !reflect.DeepEqual(created.BinaryData, cm.BinaryData) {
		fail("created configmap's data %v %v, sent %v %v", created.Data, created.BinaryData, cm.Data, cm.BinaryData)
	}
	_, err = c.Create(e.ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		fail("second create: want AlreadyExists, got %v", describe(err))
	}
	got, err := c.Get(e.ctx, "cg-cm", metav1.GetOptions{})
	check(err, "get configmap")
	if got.ResourceVersion != created.ResourceVersion || got.Labels["app"] != "cg" {
		fail("get answered %+v", got.ObjectMeta)
	}
	got.Data["k3"] = "v3"
	updated, err := c.Update(e.ctx, got, metav1.UpdateOptions{})
	check(err, "update configmap")
	if updated.Data["k3"] != "v3" || updated.ResourceVersion == got.ResourceVersion {
		fail("update answered %v at %s", updated.Data, updated.ResourceVersion)
	}
	// A stale resourceVersion conflicts; RetryOnConflict gets it done.
	got.Data["k4"] = "stale"
	_, err = c.Update(e.ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		fail("update at a stale resourceVersion: want Conflict, got %v", describe(err))
	}
	attempts := 0
	check(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempts++
		obj := got // the stale copy first, then a fresh one
		if attempts > 1 {
			fresh, err := c.Get(e.ctx, "cg-cm", metav1.GetOptions{})
			if err != nil {
				return err
			}
			obj = fresh
		}
		obj.Data["k4"] = "v4"
		_, err := c.Update(e.ctx, obj, metav1.UpdateOptions{})
		return err
	}), "RetryOnConflict")
	if attempts != 2 {
		fail("RetryOnConflict took %d attempts, want 2", attempts)
	}
	// The three patch types.
	p, err := c.Patch(e.ctx, "cg-cm", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"x"}},"data":{"k1":null,"k5":"v5"}}`), metav1.PatchOptions{})
	check(err, "strategic merge patch")
	if _, has := p.Data["k1"]; has || p.Data["k5"] != "v5" || p.Labels["tier"] != "x" || p.Labels["app"] != "cg" {
		fail("strategic merge patch gave %v %v", p.Labels, p.Data)
	}
	p, err = c.Patch(e.ctx, "cg-cm", types.MergePatchType, []byte(`{"data":{"k2":null,"k6":"v6"}}`), metav1.PatchOptions{})
	check(err, "JSON merge patch")
	if _, has := p.Data["k2"]; has || p.Data["k6"] != "v6" {
		fail("merge patch gave %v", p.Data)
	}
	p, err = c.Patch(e.ctx, "cg-cm", types.JSONPatchType,
		[]byte(`[{"op":"test","path":"/data/k6","value":"v6"},{"op":"replace","path":"/data/k6","value":"six"},{"op":"add","path":"/metadata/annotations/b","value":"2"}]`),
		metav1.PatchOptions{})
	check(err, "JSON patch")
	if p.Data["k6"] != "six" || p.Annotations["b"] != "2" {
		fail("JSON patch gave %v %v", p.Data, p.Annotations)
	}
	_, err = c.Patch(e.ctx, "cg-cm", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/k6","value":"nope"}]`), metav1.PatchOptions{})
	if err == nil || apierrors.ReasonForError(err) != metav1.StatusReasonInvalid && !apierrors.IsConflict(err) && !apierrors.IsBadRequest(err) {
		fail("a failing JSON patch test op: want an error (422), got %v", describe(err))
	}
	_, err = c.Patch(e.ctx, "cg-missing", types.MergePatchType, []byte(`{"data":{"a":"b"}}`), metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		fail("patch of a missing configmap: want NotFound, got %v", describe(err))
	}
	// Dry run changes nothing.
	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-dry"}, Data: map[string]string{"a": "b"}}
	_, err = c.Create(e.ctx, dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	check(err, "dry-run create")
	if _, err = c.Get(e.ctx, "cg-dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		fail("after a dry-run create: want NotFound, got %v", describe(err))
	}
	// Delete with a precondition on the uid, then 404s.
	err = c.Delete(e.ctx, "cg-cm", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("wrong"))}})
	if !apierrors.IsConflict(err) {
		fail("delete with a wrong uid precondition: want Conflict, got %v", describe(err))
	}
	check(c.Delete(e.ctx, "cg-cm", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &created.UID}}), "delete configmap")
	if _, err = c.Get(e.ctx, "cg-cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		fail("get after delete: want NotFound, got %v", describe(err))
	}
	if err = c.Delete(e.ctx, "cg-cm", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		fail("second delete: want NotFound, got %v", describe(err))
	}
	e.out(step, "configmaps: create, AlreadyExists, get, update, Conflict, RetryOnConflict, strategic/merge/JSON patch, dry run, delete, NotFound")
}

func typedPods(e *env, step string) {
	c := e.cs.CoreV1().Pods(e.ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-pod", Labels: map[string]string{"app": "cg"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
				Ports: []corev1.ContainerPort{{ContainerPort: 8080, Name: "http"}},
				Env:   []corev1.EnvVar{{Name: "A", Value: "1"}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
			}},
			TerminationGracePeriodSeconds: ptr.To(int64(0)),
		},
	}
	created, err := c.Create(e.ctx, pod, metav1.CreateOptions{})
	check(err, "create pod")
	ctr := created.Spec.Containers[0]
	if ctr.TerminationMessagePath == "" || ctr.ImagePullPolicy == "" || created.Spec.RestartPolicy == "" ||
		created.Spec.DNSPolicy == "" || created.Spec.SchedulerName == "" || created.Status.Phase != corev1.PodPending {
		fail("created pod lacks defaults: container %+v, spec.restartPolicy %q, dnsPolicy %q, schedulerName %q, phase %q",
			ctr, created.Spec.RestartPolicy, created.Spec.DNSPolicy, created.Spec.SchedulerName, created.Status.Phase)
	}
	if q := ctr.Resources.Requests[corev1.ResourceCPU]; q.MilliValue() != 100 {
		fail("cpu request came back as %s", q.String())
	}
	// A strategic merge patch merges containers by name and env by name.
	p, err := c.Patch(e.ctx, "cg-pod", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"patched":"yes"}},"spec":{"containers":[{"name":"main","image":"busybox:1.37"}]}}`), metav1.PatchOptions{})
	check(err, "strategic merge patch of a pod")
	if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Image != "busybox:1.37" || len(p.Spec.Containers[0].Env) != 1 {
		fail("strategic merge patch of the pod gave containers %+v", p.Spec.Containers)
	}
	// A change to a field that cannot change is Invalid.
	bad := p.DeepCopy()
	bad.Spec.Containers[0].Name = "renamed"
	_, err = c.Update(e.ctx, bad, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		fail("update of an immutable pod field: want Invalid, got %v", describe(err))
	}
	// The status subresource.
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "Example", Status: corev1.ConditionTrue})
	s, err := c.UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
	check(err, "update pod status")
	found := false
	for _, cond := range s.Status.Conditions {
		found = found || cond.Type == "Example"
	}
	if !found {
		fail("status update lost the condition: %+v", s.Status.Conditions)
	}
	list, err := c.List(e.ctx, metav1.ListOptions{LabelSelector: "app=cg,patched=yes"})
	check(err, "list pods by label")
	if len(list.Items) != 1 || list.ResourceVersion == "" {
		fail("label-selected list gave %d pods at %q", len(list.Items), list.ResourceVersion)
	}
	check(c.Delete(e.ctx, "cg-pod", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}), "delete pod")
	eventually(e, "the pod gone", func() bool {
		_, err := c.Get(e.ctx, "cg-pod", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	e.out(step, "pods: create (defaults), strategic merge patch, Invalid, status, list by label, delete")
}

func typedDeployment(e *env, step string) {
	c := e.cs.AppsV1().Deployments(e.ns)
	labels := map[string]string{"app": "cg-web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	created, err := c.Create(e.ctx, d, metav1.CreateOptions{})
	check(err, "create deployment")
	if created.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || created.Spec.RevisionHistoryLimit == nil ||
		created.Spec.ProgressDeadlineSeconds == nil || created.Generation != 1 {
		fail("created deployment lacks defaults: strategy %+v, revisionHistoryLimit %v, progressDeadlineSeconds %v, generation %d",
			created.Spec.Strategy, created.Spec.RevisionHistoryLimit, created.Spec.ProgressDeadlineSeconds, created.Generation)
	}
	check(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.Get(e.ctx, "cg-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Replicas = ptr.To(int32(3))
		_, err = c.Update(e.ctx, cur, metav1.UpdateOptions{})
		return err
	}), "update deployment replicas")
	scale, err := c.GetScale(e.ctx, "cg-web", metav1.GetOptions{})
	check(err, "get deployment scale")
	if scale.Spec.Replicas != 3 {
		fail("scale says %d replicas, want 3", scale.Spec.Replicas)
	}
	_, err = c.UpdateScale(e.ctx, "cg-web", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-web", Namespace: e.ns, ResourceVersion: scale.ResourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 4},
	}, metav1.UpdateOptions{})
	check(err, "update deployment scale")
	p, err := c.Patch(e.ctx, "cg-web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{})
	check(err, "strategic merge patch of the deployment")
	if *p.Spec.Replicas != 4 || p.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || p.Generation < 3 {
		fail("patched deployment: replicas %d, image %s, generation %d", *p.Spec.Replicas, p.Spec.Template.Spec.Containers[0].Image, p.Generation)
	}
	check(c.Delete(e.ctx, "cg-web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}), "delete deployment")
	eventually(e, "the deployment gone", func() bool {
		_, err := c.Get(e.ctx, "cg-web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	e.out(step, "deployment: create (defaults), RetryOnConflict update, scale get/update, patch, foreground delete")
}

func typedService(e *env, step string) {
	c := e.cs.CoreV1().Services(e.ns)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-svc"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "cg-web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	created, err := c.Create(e.ctx, svc, metav1.CreateOptions{})
	check(err, "create service")
	if created.Spec.ClusterIP == "" || len(created.Spec.ClusterIPs) != 1 || created.Spec.Type != corev1.ServiceTypeClusterIP ||
		created.Spec.Ports[0].Protocol != corev1.ProtocolTCP || created.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		fail("created service: clusterIP %q %v, type %q, ports %+v, sessionAffinity %q",
			created.Spec.ClusterIP, created.Spec.ClusterIPs, created.Spec.Type, created.Spec.Ports, created.Spec.SessionAffinity)
	}
	if created.Spec.Ports[0].TargetPort.Type != intstr.String || created.Spec.Ports[0].TargetPort.StrVal != "http" {
		fail("targetPort came back as %+v", created.Spec.Ports[0].TargetPort)
	}
	p, err := c.Patch(e.ctx, "cg-svc", types.StrategicMergePatchType,
		[]byte(`{"spec":{"ports":[{"port":443,"name":"https","targetPort":8443}]}}`), metav1.PatchOptions{})
	check(err, "strategic merge patch of the service")
	if len(p.Spec.Ports) != 2 || p.Spec.ClusterIP != created.Spec.ClusterIP {
		fail("patched service: ports %+v, clusterIP %q (was %q)", p.Spec.Ports, p.Spec.ClusterIP, created.Spec.ClusterIP)
	}
	for _, port := range p.Spec.Ports {
		if port.Name == "https" && (port.TargetPort.Type != intstr.Int || port.TargetPort.IntVal != 8443) {
			fail("an int targetPort came back as %+v", port.TargetPort)
		}
	}
	check(c.Delete(e.ctx, "cg-svc", metav1.DeleteOptions{}), "delete service")
	e.out(step, "service: create (clusterIP %s), patch ports, delete", created.Spec.ClusterIP)
}

func typedSecret(e *env, step string) {
	c := e.cs.CoreV1().Secrets(e.ns)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-secret"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"raw": {0, 0xff, 'x'}},
		StringData: map[string]string{"password": "hunter2"},
	}
	created, err := c.Create(e.ctx, secret, metav1.CreateOptions{})
	check(err, "create secret")
	if string(created.Data["password"]) != "hunter2" || string(created.Data["raw"]) != "\x00\xffx" || len(created.StringData) != 0 {
		fail("created secret: data %q, stringData %v", created.Data, created.StringData)
	}
	immutable := created.DeepCopy()
	immutable.Immutable = ptr.To(true)
	u, err := c.Update(e.ctx, immutable, metav1.UpdateOptions{})
	check(err, "make the secret immutable")
	u.Data["more"] = []byte("x")
	if _, err = c.Update(e.ctx, u, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		fail("update of an immutable secret's data: want Invalid, got %v", describe(err))
	}
	check(c.Delete(e.ctx, "cg-secret", metav1.DeleteOptions{}), "delete secret")
	e.out(step, "secret: create (stringData merged), immutable, Invalid, delete")
}

// stepPaging: a list in pages with Limit/Continue, and resourceVersion semantics.
func stepPaging(e *env, step string) {
	c := e.cs.CoreV1().ConfigMaps(e.ns)
	const total = 11
	for i := 0; i < total; i++ {
		_, err := c.Create(e.ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cg-page-%02d", i), Labels: map[string]string{"paging": "yes"}},
			Data:       map[string]string{"i": fmt.Sprint(i)},
		}, metav1.CreateOptions{})
		check(err, "create configmap %d", i)
	}
	var names []string
	opts := metav1.ListOptions{LabelSelector: "paging=yes", Limit: 4}
	pages := 0
	var first string
	for {
		list, err := c.List(e.ctx, opts)
		check(err, "list page %d", pages)
		pages++
		if first == "" {
			first = list.ResourceVersion
		} else if list.ResourceVersion != first {
			fail("page %d at resourceVersion %s, the first at %s", pages, list.ResourceVersion, first)
		}
		for _, item := range list.Items {
			names = append(names, item.Name)
		}
		if list.Continue == "" {
			if list.RemainingItemCount != nil && *list.RemainingItemCount != 0 {
				fail("the last page says %d remaining", *list.RemainingItemCount)
			}
			break
		}
		if len(list.Items) != 4 {
			fail("page %d has %d items", pages, len(list.Items))
		}
		if list.RemainingItemCount != nil { // unknown with a label selector, as upstream leaves it
			fail("page %d of a label-selected list has remainingItemCount %d", pages, *list.RemainingItemCount)
		}
		opts.Continue = list.Continue
		if pages == 1 { // a write between pages is not seen: the pages are a snapshot
			check(c.Delete(e.ctx, "cg-page-10", metav1.DeleteOptions{}), "delete between pages")
		}
	}
	if pages != 3 || len(names) != total {
		fail("%d pages with %d names: %v", pages, len(names), names)
	}
	for i, name := range names {
		if name != fmt.Sprintf("cg-page-%02d", i) {
			fail("names out of order: %v", names)
		}
	}
	// Without a selector the first page counts what remains.
	all, err := c.List(e.ctx, metav1.ListOptions{})
	check(err, "list all")
	page, err := c.List(e.ctx, metav1.ListOptions{Limit: 4})
	check(err, "list a page without a selector")
	if page.RemainingItemCount == nil || *page.RemainingItemCount != int64(len(all.Items)-4) {
		fail("the first page's remainingItemCount is %v, want %d", ptr.Deref(page.RemainingItemCount, -1), len(all.Items)-4)
	}
	// A continue token of an old snapshot past compaction would be 410; a bogus one is 400.
	_, err = c.List(e.ctx, metav1.ListOptions{Limit: 2, Continue: "bogus"})
	if !apierrors.IsBadRequest(err) {
		fail("a bogus continue token: want BadRequest, got %v", describe(err))
	}
	// resourceVersion="0" (any: served by the watch cache, which sees the delete soon, not at once),
	// and Exact at the first page's resourceVersion.
	eventually(e, fmt.Sprintf("a list at resourceVersion 0 with %d items", total-1), func() bool {
		any, err := c.List(e.ctx, metav1.ListOptions{LabelSelector: "paging=yes", ResourceVersion: "0"})
		check(err, "list at resourceVersion 0")
		return len(any.Items) == total-1
	})
	exact, err := c.List(e.ctx, metav1.ListOptions{LabelSelector: "paging=yes", ResourceVersion: first, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	check(err, "list Exact at %s", first)
	if len(exact.Items) != total || exact.ResourceVersion != first {
		fail("list Exact at %s has %d items at %s", first, len(exact.Items), exact.ResourceVersion)
	}
	check(c.DeleteCollection(e.ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "paging=yes"}), "deletecollection")
	left, err := c.List(e.ctx, metav1.ListOptions{LabelSelector: "paging=yes"})
	check(err, "list after deletecollection")
	if len(left.Items) != 0 {
		fail("%d left after deletecollection", len(left.Items))
	}
	e.out(step, "%d configmaps in %d pages of 4 (a snapshot), bogus continue 400, resourceVersion 0 and Exact, deletecollection", total, pages)
}
