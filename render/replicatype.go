package render

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of one replica type and of its ports, each problem with its
// field path: what newPlan admits is what the operator would make.

func checkReplicaType(app *FLApp, name string, path *field.Path, prefixOK bool) (replicaType, field.ErrorList) {
	var errs field.ErrorList
	spec := app.Spec.FLReplicaSpecs[name]
	rt := replicaType{name: name, replicas: Replicas(spec)}

	// The type is the middle of every Service name and the fl-replica-type
	// label value: check its characters as a label value and inside a minimal
	// DNS-1035 name, then the length with the real, longest name.
	lower := strings.ToLower(name)
	typeMsgs := validation.IsValidLabelValue(lower)
	if lower == "" {
		typeMsgs = append(typeMsgs, "must not be empty")
	} else if msgs := validation.IsDNS1035Label("a-" + lower + "-0"); len(msgs) > 0 {
		typeMsgs = append(typeMsgs, msgs...)
	}
	if len(typeMsgs) > 0 {
		errs = append(errs, field.Invalid(path, name,
			"the replica type is part of every Service name and the fl-replica-type label, so in lower case it must be a-z, 0-9 and '-', starting and ending with a letter or digit: "+strings.Join(typeMsgs, "; ")))
	} else if prefixOK && rt.replicas > 0 {
		longest := ServiceName(app.Name, app.Spec.Role, name, int(rt.replicas-1))
		if msgs := validation.IsDNS1035Label(longest); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), app.Name,
				fmt.Sprintf("Service name %q (%d characters) is not a valid DNS-1035 label: %s; shorten the FLApp name or the replica type %q",
					longest, len(longest), strings.Join(msgs, "; "), name)))
		}
	}

	if rt.replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), rt.replicas, "must be greater than or equal to 0"))
	}
	if rt.replicas <= 0 {
		return rt, errs
	}

	containers := spec.Template.Spec.Containers
	cpath := path.Child("template", "spec", "containers")
	for i := range containers {
		if containers[i].Name == ContainerName {
			var portErrs field.ErrorList
			rt.ports, portErrs = servicePorts(containers[i].Ports, cpath.Index(i).Child("ports"))
			return rt, append(errs, portErrs...)
		}
	}
	return rt, append(errs, field.Required(cpath,
		fmt.Sprintf("no container named %q: its ports define the Services of %d replica(s)", ContainerName, rt.replicas)))
}

// servicePorts maps the tensorflow container's ports to Service ports, adding
// the operator's default flapp-port when no port has that name.
func servicePorts(ports []corev1.ContainerPort, path *field.Path) ([]corev1.ServicePort, field.ErrorList) {
	var errs field.ErrorList
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	names := make(map[string]int, len(ports)+1)
	numbers := make(map[portKey]int, len(ports)+1)
	out := make([]corev1.ServicePort, 0, len(ports)+1)

	add := func(p corev1.ContainerPort, ppath *field.Path, isDefault bool) {
		what := ""
		if isDefault {
			what = fmt.Sprintf(" (the default %s on %d, added because no port is named %s)", DefaultPortName, DefaultPort, DefaultPortName)
		}
		ok := true
		if p.Name == "" {
			errs = append(errs, field.Required(ppath.Child("name"), "every port needs a name: it is the Service port's name and targetPort"))
			ok = false
		} else if msgs := validation.IsValidPortName(p.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ppath.Child("name"), p.Name, "must be an IANA service name: "+strings.Join(msgs, "; ")))
			ok = false
		} else if first, dup := names[p.Name]; dup {
			errs = append(errs, field.Duplicate(ppath.Child("name"), p.Name))
			errs[len(errs)-1].Detail = fmt.Sprintf("same name as ports[%d]", first)
			ok = false
		}
		if msgs := validation.IsValidPortNum(int(p.ContainerPort)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(ppath.Child("containerPort"), p.ContainerPort, strings.Join(msgs, "; ")))
			ok = false
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		if !slices.Contains(supportedProtocols, protocol) {
			errs = append(errs, field.NotSupported(ppath.Child("protocol"), p.Protocol, supportedProtocols))
			ok = false
		}
		if !ok {
			return
		}
		key := portKey{p.ContainerPort, protocol}
		if first, dup := numbers[key]; dup {
			errs = append(errs, field.Duplicate(ppath.Child("containerPort"), fmt.Sprintf("%d/%s", p.ContainerPort, protocol)))
			errs[len(errs)-1].Detail = fmt.Sprintf("same port and protocol as ports[%d]%s", first, what)
			return
		}
		idx := len(out)
		names[p.Name] = idx
		numbers[key] = idx
		sp := corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name)}
		if protocol != corev1.ProtocolTCP {
			sp.Protocol = protocol
		}
		out = append(out, sp)
	}

	hasDefault := false
	for i := range ports {
		if ports[i].Name == DefaultPortName {
			hasDefault = true
		}
		add(ports[i], path.Index(i), false)
	}
	if !hasDefault {
		add(corev1.ContainerPort{Name: DefaultPortName, ContainerPort: DefaultPort}, path.Index(len(ports)), true)
	}
	return out, errs
}
