package benchdata

import (
	"fmt"
	"strings"
)

// The objects of the kustomize corpus (corpus.go): FLApps of varied sizes,
// the CustomResourceDefinitions of an operator install, and the plain
// workloads a team keeps beside its FLApps. Everything varies with the
// object's index through mix, so the corpus is the same on every run.

// mix is a deterministic hash of i and salt (splitmix64's finalizer): the
// corpus's only source of variety.
func mix(i, salt int) uint64 {
	z := uint64(i)*0x9e3779b97f4a7c15 + uint64(salt)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// pick is mix(i, salt) in [0, n).
func pick(i, salt, n int) int { return int(mix(i, salt) % uint64(n)) }

// flapp is one FLApp of the corpus.
type flapp struct {
	name      string // no namespace: the kustomizations set it
	labels    [][2]string
	follower  bool // role Follower (peer Leader) instead of Leader
	workers   int  // Worker replicas; Master 1 and PS 1 or 2
	ps        int  // PS replicas
	image     string
	configMap string // a ConfigMap the replicas mount and read env from ("" for none)
	secret    string // a Secret the Workers read a token from ("" for none)
}

// corpusFLApp is FLApp i of a team, with a varied size and labels: train or
// eval, gpu or cpu, priority high or normal.
func corpusFLApp(team string, i int) flapp {
	tier := []string{"train", "train", "eval"}[pick(i, 1, 3)]
	acc := []string{"cpu", "cpu", "gpu"}[pick(i, 2, 3)]
	prio := []string{"normal", "normal", "high"}[pick(i, 3, 3)]
	return flapp{
		name: fmt.Sprintf("%s-%s-%03d", team, []string{"ctr", "cvr", "rank", "mnist", "embed", "ltv"}[pick(i, 4, 6)], i),
		labels: [][2]string{
			{"app.kubernetes.io/name", "fedlearner-job"},
			{"fedlearner.k8s.io/team", team},
			{"tier", tier},
			{"accelerator", acc},
			{"priority", prio},
		},
		workers: 1 + pick(i, 5, 6),
		ps:      1 + pick(i, 6, 2),
		image:   "fedlearner/fedlearner:v2.3.0",
	}
}

// write writes the FLApp as a team keeps it in Git (no UID, no status).
func (f flapp) write(b *strings.Builder) {
	fmt.Fprintf(b, "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata:\n  name: %s\n", f.name)
	if len(f.labels) > 0 {
		b.WriteString("  labels:\n")
		for _, l := range f.labels {
			fmt.Fprintf(b, "    %s: %s\n", l[0], l[1])
		}
	}
	role, peer, peerRole := "Leader", "Follower", "follower"
	if f.follower {
		role, peer, peerRole = "Follower", "Leader", "leader"
	}
	fmt.Fprintf(b, `spec:
  role: %s
  cleanPodPolicy: All
  peerSpecs:
    %s:
      peerURL: fedlearner-stack-ingress-nginx-controller.fl-%s.svc:80
      authority: %s-%s.fl.example.com
  flReplicaSpecs:
`, role, peer, peerRole, f.name, peerRole)
	for _, rt := range []struct {
		name     string
		replicas int
		pair     bool
		ports    []string
	}{
		{"Master", 1, false, []string{"flapp-port:50051"}},
		{"PS", f.ps, false, []string{"flapp-port:50051", "tf-port:50052"}},
		{"Worker", f.workers, true, []string{"flapp-port:50051", "tf-port:50052"}},
	} {
		fmt.Fprintf(b, `    %s:
      pair: %t
      replicas: %d
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: tensorflow
            image: %s
            command: ["/app/deploy/scripts/trainer/run_trainer_%s.sh"]
            env:
            - name: ROLE
              value: %s
            - name: APPLICATION_ID
              value: %s
            - name: MODEL_VERSION
              value: unset
`, rt.name, rt.pair, rt.replicas, f.image, strings.ToLower(rt.name), strings.ToLower(role), f.name)
		if f.secret != "" && rt.name == "Worker" {
			fmt.Fprintf(b, `            - name: PEER_TOKEN
              valueFrom:
                secretKeyRef:
                  name: %s
                  key: token
`, f.secret)
		}
		if f.configMap != "" {
			fmt.Fprintf(b, "            envFrom:\n            - configMapRef:\n                name: %s\n", f.configMap)
		}
		b.WriteString(`            resources:
              limits: {cpu: "4", memory: 8Gi}
              requests: {cpu: "2", memory: 4Gi}
            ports:
`)
		for _, p := range rt.ports {
			name, port, _ := strings.Cut(p, ":")
			fmt.Fprintf(b, "            - name: %s\n              containerPort: %s\n", name, port)
		}
		if f.configMap != "" {
			fmt.Fprintf(b, `            volumeMounts:
            - name: trainer-config
              mountPath: /etc/trainer
          volumes:
          - name: trainer-config
            configMap:
              name: %s
`, f.configMap)
		}
	}
}

// flappNameReferences is a kustomize `configurations:` file: where an FLApp
// names a ConfigMap or a Secret, so that generated names (hash suffixes,
// prefixes) reach its replicas as they reach a Deployment's.
const flappNameReferences = `nameReference:
- kind: ConfigMap
  version: v1
  fieldSpecs:
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/Master/template/spec/containers/envFrom/configMapRef/name}
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/PS/template/spec/containers/envFrom/configMapRef/name}
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/Worker/template/spec/containers/envFrom/configMapRef/name}
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/Master/template/spec/volumes/configMap/name}
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/PS/template/spec/volumes/configMap/name}
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/Worker/template/spec/volumes/configMap/name}
- kind: Secret
  version: v1
  fieldSpecs:
  - {kind: FLApp, group: fedlearner.k8s.io, path: spec/flReplicaSpecs/Worker/template/spec/containers/env/valueFrom/secretKeyRef/name}
`

// deployment writes a Deployment with its Service, as a team runs a data
// portal or a model server beside its jobs. configMap and secret, when set,
// are read through envFrom and a volume.
func deployment(b *strings.Builder, name string, replicas int, configMap, secret string) {
	fmt.Fprintf(b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      serviceAccountName: fedlearner
      containers:
      - name: server
        image: fedlearner/fedlearner-web-console:v2.3.0
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
        readinessProbe:
          httpGet: {path: /healthz, port: http}
          periodSeconds: 10
        resources:
          limits: {cpu: "1", memory: 1Gi}
          requests: {cpu: 200m, memory: 256Mi}
`, name, replicas)
	if configMap != "" || secret != "" {
		b.WriteString("        envFrom:\n")
		if configMap != "" {
			fmt.Fprintf(b, "        - configMapRef:\n            name: %s\n", configMap)
		}
		if secret != "" {
			fmt.Fprintf(b, "        - secretRef:\n            name: %s\n", secret)
		}
	}
	if configMap != "" {
		fmt.Fprintf(b, `        volumeMounts:
        - name: config
          mountPath: /etc/%[1]s
      volumes:
      - name: config
        configMap:
          name: %[2]s
`, name, configMap)
	}
	fmt.Fprintf(b, `---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  selector:
    app: %[1]s
  ports:
  - name: http
    port: 80
    targetPort: http
`, name)
}

// rbac writes the ServiceAccount, Role and RoleBinding of a team's
// namespace.
func rbac(b *strings.Builder) {
	b.WriteString(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: fedlearner
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: fedlearner-jobs
rules:
- apiGroups: [fedlearner.k8s.io]
  resources: [flapps, flapps/status]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [pods, services, configmaps, secrets]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: fedlearner-jobs
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: fedlearner-jobs
subjects:
- kind: ServiceAccount
  name: fedlearner
`)
}

// The words the CRDs are made of: a cloud provider's services and
// resources, as a Crossplane provider installs hundreds of them.
var (
	crdServices = []string{"ec2", "s3", "rds", "iam", "lambda", "eks", "elb", "route53", "sqs", "sns", "kms", "dynamodb",
		"cloudwatch", "ecr", "efs", "elasticache", "kafka", "glue", "athena", "redshift", "apigateway", "cognito", "secretsmanager", "backup"}
	crdResources = []string{"Instance", "Bucket", "Policy", "Role", "Cluster", "Subnet", "Table", "Queue", "Topic", "Key",
		"Alias", "Function", "Permission", "Attachment", "Group", "User", "Volume", "Snapshot", "Endpoint", "Listener",
		"Rule", "Route", "Gateway", "Repository", "Stage", "Deployment", "Domain", "Certificate", "Parameter", "Vault"}
	crdQualifiers = []string{"", "Policy", "Attachment", "Configuration", "Association", "Version", "Replica", "Subscription"}
	fieldHeads    = []string{"max", "min", "default", "enable", "allocated", "preferred", "source", "target", "kms", "log",
		"backup", "storage", "network", "security", "availability", "retention", "replication", "monitoring", "tag", "engine"}
	fieldTails = []string{"Size", "Count", "Id", "Arn", "Name", "Type", "Mode", "Window", "Period", "Zone", "Class",
		"Policy", "Version", "Enabled", "Endpoint", "Port", "Config", "Settings", "Retries", "Timeout"}
	prose = []string{"The", "identifier", "of", "the", "resource", "that", "is", "managed", "by", "this", "provider", "and",
		"must", "be", "unique", "within", "account", "region", "when", "set", "value", "is", "used", "for", "all",
		"requests", "Changing", "forces", "a", "new", "to", "be", "created", "Defaults", "an", "empty", "list", "see",
		"documentation", "details", "configuration", "block", "supports", "following", "arguments", "Valid", "values", "are"}
)

// crdKind is the kind and group of CRD i: every (group, kind) distinct.
func crdKind(i int) (kind, group string) {
	s, j := i%len(crdServices), i/len(crdServices)
	kind = crdResources[(j+s)%len(crdResources)] + crdQualifiers[(j/len(crdResources))%len(crdQualifiers)]
	return kind, crdServices[s] + ".cloud.example.io"
}

// sentence is a description of words words, varied by i and salt.
func sentence(i, salt, words int) string {
	var s []string
	for w := 0; w < words; w++ {
		s = append(s, prose[pick(i*131+w, salt, len(prose))])
	}
	return strings.Join(s, " ") + "."
}

// writeCRD writes CRD i of an operator install: one served version whose
// schema has fields spec.forProvider fields (and half as many in
// status.atProvider), of every type a provider's schema has, described as
// controller-gen writes them. About 10 kB at 30 fields.
func writeCRD(b *strings.Builder, i, fields int) {
	kind, group := crdKind(i)
	plural := strings.ToLower(kind) + "s"
	conversion := []string{"none", "webhook"}[pick(i, 7, 2)]
	fmt.Fprintf(b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
  labels:
    app.kubernetes.io/part-of: provider-cloud
    conversion: %[5]s
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.5
spec:
  group: %[2]s
  names:
    categories:
    - crossplane
    - managed
    - cloud
    kind: %[3]s
    listKind: %[3]sList
    plural: %[1]s
    singular: %[4]s
  scope: Cluster
  versions:
  - additionalPrinterColumns:
    - jsonPath: .status.conditions[?(@.type=='Synced')].status
      name: SYNCED
      type: string
    - jsonPath: .status.conditions[?(@.type=='Ready')].status
      name: READY
      type: string
    - jsonPath: .metadata.annotations.crossplane\.io/external-name
      name: EXTERNAL-NAME
      type: string
    - jsonPath: .metadata.creationTimestamp
      name: AGE
      type: date
    name: v1beta1
    schema:
      openAPIV3Schema:
        description: %[3]s is the Schema for the %[3]ss API. %[6]s
        properties:
          apiVersion:
            description: APIVersion defines the versioned schema of this representation of an object.
            type: string
          kind:
            description: Kind is a string value representing the REST resource this object represents.
            type: string
          metadata:
            type: object
          spec:
            description: %[3]sSpec defines the desired state of %[3]s
            properties:
              deletionPolicy:
                default: Delete
                description: DeletionPolicy specifies what will happen to the underlying external when this managed resource is deleted.
                enum:
                - Orphan
                - Delete
                type: string
              forProvider:
                properties:
`, plural, group, kind, strings.ToLower(kind), conversion, sentence(i, 8, 14))
	writeFields(b, i, 9, fields, 18, 0)
	b.WriteString(`                type: object
              providerConfigRef:
                default:
                  name: default
                description: ProviderConfigReference specifies how the provider that will be used to create, observe, update, and delete this managed resource should be configured.
                properties:
                  name:
                    description: Name of the referenced object.
                    type: string
                required:
                - name
                type: object
            required:
            - forProvider
            type: object
          status:
            description: ` + kind + `Status defines the observed state of ` + kind + `.
            properties:
              atProvider:
                properties:
`)
	writeFields(b, i, 10, fields/2, 18, 0)
	b.WriteString(`                type: object
              conditions:
                description: Conditions of the resource.
                items:
                  description: A Condition that may apply to a resource.
                  properties:
                    lastTransitionTime:
                      description: LastTransitionTime is the last time this condition transitioned from one status to another.
                      format: date-time
                      type: string
                    message:
                      description: A Message containing details about this condition's last transition from one status to another, if any.
                      type: string
                    reason:
                      description: A Reason for this condition's last transition from one status to another.
                      type: string
                    status:
                      description: Status of this condition; is it currently True, False, or Unknown?
                      type: string
                    type:
                      description: Type of this condition. At most one of each condition type may apply to a resource at any point in time.
                      type: string
                  required:
                  - lastTransitionTime
                  - reason
                  - status
                  - type
                  type: object
                type: array
                x-kubernetes-list-map-keys:
                - type
                x-kubernetes-list-type: map
            type: object
        required:
        - spec
        type: object
    served: true
    storage: true
    subresources:
      status: {}
`)
}

// writeFields writes n properties of a schema at the given indentation:
// strings, integers, booleans, lists and (above depth 2) lists of objects.
func writeFields(b *strings.Builder, i, salt, n, indent, depth int) {
	pad := strings.Repeat(" ", indent)
	start := pick(i, salt, len(fieldHeads)*len(fieldTails))
	for f := 0; f < n; f++ {
		k := (start + f*7) % (len(fieldHeads) * len(fieldTails))
		name := fieldHeads[k%len(fieldHeads)] + fieldTails[k/len(fieldHeads)]
		fmt.Fprintf(b, "%s%s:\n%s  description: %s\n", pad, name, pad, sentence(i*37+f, salt, 8+pick(f, i, 16)))
		kinds := 6
		if depth >= 2 {
			kinds = 5
		}
		switch pick(i*53+f, salt, kinds) {
		case 0, 1:
			fmt.Fprintf(b, "%s  type: string\n", pad)
		case 2:
			fmt.Fprintf(b, "%s  format: int64\n%s  type: integer\n", pad, pad)
		case 3:
			fmt.Fprintf(b, "%s  type: boolean\n", pad)
		case 4:
			fmt.Fprintf(b, "%s  items:\n%s    type: string\n%s  type: array\n%s  x-kubernetes-list-type: set\n", pad, pad, pad, pad)
		case 5:
			fmt.Fprintf(b, "%s  items:\n%s    properties:\n", pad, pad)
			writeFields(b, i*13+f, salt+1, 3, indent+6, depth+1)
			fmt.Fprintf(b, "%s    type: object\n%s  type: array\n", pad, pad)
		}
	}
}
