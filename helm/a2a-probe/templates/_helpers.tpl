{{/* Chart name, truncated to a DNS label. */}}
{{- define "a2a-probe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart>, or the release name when it already contains the chart name. */}}
{{- define "a2a-probe.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "a2a-probe.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{- define "a2a-probe.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "a2a-probe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "a2a-probe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "a2a-probe.labels" -}}
helm.sh/chart: {{ include "a2a-probe.chart" . }}
{{ include "a2a-probe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | toString | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: probe
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "a2a-probe.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "a2a-probe.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "a2a-probe.configMapName" -}}
{{- default (include "a2a-probe.fullname" .) .Values.existingConfigMap }}
{{- end }}

{{/* The config file as rendered into the ConfigMap; its hash is the checksum/config annotation. */}}
{{- define "a2a-probe.configYaml" -}}
{{- toYaml .Values.config }}
{{- end }}

{{/* An image reference from {registry, repository, tag, digest}; `default` is the tag used when tag is empty. */}}
{{- define "a2a-probe.imageRef" -}}
{{- $repo := .image.repository }}
{{- if .image.registry }}
{{- $repo = printf "%s/%s" (trimSuffix "/" .image.registry) $repo }}
{{- end }}
{{- $tag := .image.tag | default .default | toString }}
{{- if and .image.digest $tag }}
{{- printf "%s:%s@%s" $repo $tag .image.digest }}
{{- else if .image.digest }}
{{- printf "%s@%s" $repo .image.digest }}
{{- else }}
{{- printf "%s:%s" $repo $tag }}
{{- end }}
{{- end }}

{{/* The agent names the Probe object targets: probe.targets, else every config.agents[].name. */}}
{{- define "a2a-probe.probeTargets" -}}
{{- $targets := .Values.probe.targets }}
{{- if not $targets }}
{{- range (.Values.config.agents | default list) }}
{{- $targets = append $targets .name }}
{{- end }}
{{- end }}
{{- toYaml $targets }}
{{- end }}

{{/* Pod annotations that roll the pod when the config changes (see configReloader in values.yaml). */}}
{{- define "a2a-probe.checksumAnnotations" -}}
{{- if not .Values.existingConfigMap }}
{{- if .Values.configReloader.enabled }}
checksum/config-metrics: {{ toYaml (.Values.config.metrics | default dict) | sha256sum }}
{{- else }}
checksum/config: {{ include "a2a-probe.configYaml" . | sha256sum }}
{{- end }}
{{- end }}
{{- end }}

{{/* The pod template (`template:` and what is under it) of the Deployment and the StatefulSet. */}}
{{- define "a2a-probe.podTemplate" -}}
template:
  metadata:
    labels:
      {{- include "a2a-probe.labels" . | nindent 6 }}
      {{- with .Values.podLabels }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- $annotations := include "a2a-probe.checksumAnnotations" . | trim }}
    {{- if or $annotations .Values.podAnnotations }}
    annotations:
      {{- with $annotations }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with .Values.podAnnotations }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- end }}
  spec:
    serviceAccountName: {{ include "a2a-probe.serviceAccountName" . }}
    automountServiceAccountToken: {{ .Values.automountServiceAccountToken }}
    enableServiceLinks: false
    {{- with .Values.imagePullSecrets }}
    imagePullSecrets:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.priorityClassName }}
    priorityClassName: {{ . }}
    {{- end }}
    {{- with .Values.podSecurityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
    containers:
      {{- include "a2a-probe.container" . | nindent 6 }}
      {{- if .Values.configReloader.enabled }}
      {{- include "a2a-probe.reloaderContainer" . | nindent 6 }}
      {{- end }}
      {{- with .Values.extraContainers }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    volumes:
      {{- include "a2a-probe.volumes" . | nindent 6 }}
    {{- with .Values.nodeSelector }}
    nodeSelector:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.tolerations }}
    tolerations:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.affinity }}
    affinity:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.topologySpreadConstraints }}
    topologySpreadConstraints:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}

{{/* The probe container, as a list item; the Deployment and the sidecar snippet in NOTES.txt share it. */}}
{{- define "a2a-probe.container" -}}
- name: a2a-probe
  image: {{ include "a2a-probe.imageRef" (dict "image" .Values.image "default" .Chart.AppVersion) | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    - run
    - --config=/etc/a2a-probe/config.yaml
    {{- with .Values.extraArgs }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  env:
    - name: A2A_PROBE_LISTEN_ADDRESS
      value: {{ printf "0.0.0.0:%d" (int .Values.containerPort) | quote }}
    - name: A2A_PROBE_LOG_LEVEL
      value: {{ .Values.settings.logLevel | quote }}
    - name: A2A_PROBE_LOG_FORMAT
      value: {{ .Values.settings.logFormat | quote }}
    {{- with .Values.settings.maxConcurrency }}
    - name: A2A_PROBE_MAX_CONCURRENCY
      value: {{ . | toString | quote }}
    {{- end }}
    - name: A2A_PROBE_TIMEOUT_OFFSET
      value: {{ .Values.settings.timeoutOffset | toString | quote }}
    - name: A2A_PROBE_HISTORY_LIMIT
      value: {{ .Values.settings.historyLimit | toString | quote }}
    - name: A2A_PROBE_DRAIN_TIMEOUT
      value: {{ .Values.settings.drainTimeout | toString | quote }}
    {{- with .Values.settings.probeTargetPattern }}
    - name: A2A_PROBE_PROBE_TARGET_PATTERN
      value: {{ . | quote }}
    {{- end }}
    {{- if .Values.settings.probeTargetEnabled }}
    - name: A2A_PROBE_PROBE_TARGET_ENABLED
      value: "true"
    {{- end }}
    {{- with .Values.settings.probeTargetNetworks }}
    - name: A2A_PROBE_PROBE_TARGET_NETWORKS
      value: {{ toJson . | quote }}
    {{- end }}
    - name: A2A_PROBE_PROBE_MIN_INTERVAL
      value: {{ .Values.settings.probeMinInterval | toString | quote }}
    {{- range $key, $env := dict "webAuthBearerFile" "A2A_PROBE_WEB_AUTH_BEARER_FILE" "webAuthBasicFile" "A2A_PROBE_WEB_AUTH_BASIC_FILE" "webTlsCertFile" "A2A_PROBE_WEB_TLS_CERT_FILE" "webTlsKeyFile" "A2A_PROBE_WEB_TLS_KEY_FILE" }}
    {{- with index $.Values.settings $key }}
    - name: {{ $env }}
      value: {{ . | quote }}
    {{- end }}
    {{- end }}
    {{- if eq .Values.mode "statefulset" }}
    {{- /* each pod probes its own shard: i is the ordinal at the end of its name */}}
    - name: A2A_PROBE_SHARD
      value: {{ printf "ordinal/%d" (int .Values.replicas) | quote }}
    - name: A2A_PROBE_POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    {{- else if .Values.settings.shard }}
    - name: A2A_PROBE_SHARD
      value: {{ .Values.settings.shard | quote }}
    {{- end }}
    {{- with include "a2a-probe.pushPublicUrl" . }}
    - name: A2A_PROBE_PUSH_PUBLIC_URL
      value: {{ . | quote }}
    {{- end }}
    - name: A2A_PROBE_FIRST_PASS_RATE
      value: {{ .Values.settings.firstPassRate | toString | quote }}
    {{- with .Values.settings.maxConnections }}
    - name: A2A_PROBE_MAX_CONNECTIONS
      value: {{ . | toString | quote }}
    {{- end }}
    {{- with .Values.settings.maxConnectionsPerOrigin }}
    - name: A2A_PROBE_MAX_CONNECTIONS_PER_ORIGIN
      value: {{ . | toString | quote }}
    {{- end }}
    {{- with .Values.settings.webMaxConnections }}
    - name: A2A_PROBE_WEB_MAX_CONNECTIONS
      value: {{ . | toString | quote }}
    {{- end }}
    - name: A2A_PROBE_WEB_HEADER_TIMEOUT
      value: {{ .Values.settings.webHeaderTimeout | toString | quote }}
    - name: A2A_PROBE_WEB_KEEPALIVE_TIMEOUT
      value: {{ .Values.settings.webKeepaliveTimeout | toString | quote }}
    {{- with .Values.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.extraEnvFrom }}
  envFrom:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    - name: a2a-probe
      containerPort: {{ .Values.containerPort }}
      protocol: TCP
  {{- with .Values.livenessProbe }}
  livenessProbe:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.readinessProbe }}
  readinessProbe:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: a2a-probe-config
      mountPath: /etc/a2a-probe
      readOnly: true
    {{- range $i, $s := .Values.agentSecrets }}
    - name: {{ printf "a2a-probe-secret-%d" $i }}
      mountPath: {{ $s.mountPath | default (printf "/var/run/secrets/a2a/%s" $s.name) }}
      readOnly: true
    {{- end }}
    {{- with .Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{/* The config-reloader sidecar, as a list item. */}}
{{- define "a2a-probe.reloaderContainer" -}}
{{- $r := .Values.configReloader -}}
- name: a2a-probe-config-reloader
  image: {{ include "a2a-probe.imageRef" (dict "image" $r.image "default" "") | quote }}
  imagePullPolicy: {{ $r.image.pullPolicy }}
  args:
    - --volume-dir=/etc/a2a-probe
    - {{ printf "--webhook-url=http://127.0.0.1:%d/-/reload" (int .Values.containerPort) }}
    - --webhook-method=POST
    - {{ printf "--web.listen-address=:%d" (int $r.port) }}
    {{- with $r.extraArgs }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: reload-metrics
      containerPort: {{ $r.port }}
      protocol: TCP
  livenessProbe:
    httpGet:
      path: /metrics
      port: reload-metrics
    periodSeconds: 30
    timeoutSeconds: 5
  {{- with $r.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $r.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: a2a-probe-config
      mountPath: /etc/a2a-probe
      readOnly: true
{{- end }}

{{/* The pod volumes the containers above mount, as list items. */}}
{{- define "a2a-probe.volumes" -}}
- name: a2a-probe-config
  configMap:
    name: {{ include "a2a-probe.configMapName" . }}
{{- range $i, $s := .Values.agentSecrets }}
- name: {{ printf "a2a-probe-secret-%d" $i }}
  secret:
    secretName: {{ $s.name }}
    defaultMode: {{ $s.defaultMode | default 292 }}
    {{- with $s.items }}
    items:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The push receiver's public URL: settings.pushPublicUrl, else the push Ingress host (https with TLS). */}}
{{- define "a2a-probe.pushPublicUrl" -}}
{{- if .Values.settings.pushPublicUrl -}}
{{- .Values.settings.pushPublicUrl -}}
{{- else if and .Values.push.ingress.enabled .Values.push.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.push.ingress.tls) 0)) .Values.push.ingress.host -}}
{{- end -}}
{{- end }}

{{/* "true" when an agent of config.agents runs a module whose prober is push. */}}
{{- define "a2a-probe.usesPush" -}}
{{- $modules := dict "push" "push" -}}
{{- range $name, $m := (.Values.config.modules | default dict) }}{{ $_ := set $modules $name $m.prober }}{{ end -}}
{{- range (.Values.config.agents | default list) }}
{{- range (.modules | default list) }}{{ if eq (get $modules .) "push" }}true{{ end }}{{ end }}
{{- end -}}
{{- end }}

{{/* Checks Helm's schema validation cannot express; rendered by templates/validate.yaml. */}}
{{- define "a2a-probe.validate" -}}
{{- if and (eq .Values.mode "sidecar") (not .Values.sidecar.podSelector) }}
{{- fail "mode: sidecar needs sidecar.podSelector: the labels of the gateway pods that carry the probe container" }}
{{- end }}
{{- if and .Values.probe.enabled (not (fromYamlArray (include "a2a-probe.probeTargets" .))) }}
{{- fail "probe.enabled needs agents: list them in config.agents or probe.targets" }}
{{- end }}
{{- if and (eq .Values.mode "statefulset") .Values.settings.shard }}
{{- fail "mode: statefulset sets each pod's shard from its ordinal (ordinal/<replicas>): leave settings.shard empty" }}
{{- end }}
{{- if and (eq .Values.mode "statefulset") (lt (int .Values.replicas) 1) }}
{{- fail "mode: statefulset needs replicas >= 1: it is the number of shards the agents are split into" }}
{{- end }}
{{- if and (eq .Values.mode "statefulset") (ne .Values.service.type "ClusterIP") }}
{{- fail "mode: statefulset makes the Service headless (per-pod scraping), so service.type must be ClusterIP" }}
{{- end }}
{{- if and (include "a2a-probe.usesPush" .) (not (include "a2a-probe.pushPublicUrl" .)) }}
{{- fail "an agent runs a push module: set settings.pushPublicUrl (the URL agents reach the probe at) or push.ingress.enabled with push.ingress.host" }}
{{- end }}
{{- if and (eq .Values.mode "statefulset") .Values.push.enabled }}
{{- fail "push.enabled needs mode: deployment: a webhook must reach the one pod that registered it" }}
{{- end }}
{{- if and .Values.push.ingress.enabled (not (and .Values.push.enabled .Values.push.ingress.host)) }}
{{- fail "push.ingress.enabled needs push.enabled (the Service port it routes to) and push.ingress.host" }}
{{- end }}
{{- if and (ne .Values.mode "sidecar") .Values.networkPolicy.enabled }}
{{- $e := .Values.networkPolicy.egress }}
{{- if not (or $e.gatewayCIDRs $e.gatewayNamespaces $e.extraRules) }}
{{- fail "networkPolicy.enabled needs networkPolicy.egress.gatewayCIDRs, gatewayNamespaces or extraRules: otherwise the probe can reach no agent" }}
{{- end }}
{{- end }}
{{- end }}
