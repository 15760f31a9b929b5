{{/* The FLApp's name: the release name unless nameOverride is set. */}}
{{- define "flapp.name" -}}
{{- default .Release.Name .Values.nameOverride -}}
{{- end -}}
