package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"
)

// endpoint is one API server address and how to reach it.
type endpoint struct {
	URL   string
	Token string
	CA    string // a PEM file; empty: plain HTTP
}

// apiClient makes the register's operations on ConfigMaps of one namespace.
type apiClient struct {
	ep        endpoint
	http      *http.Client
	namespace string
	timeout   time.Duration
}

func newClient(ep endpoint, namespace string, timeout time.Duration) (*apiClient, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	if ep.CA != "" {
		pem, err := os.ReadFile(ep.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate in it", ep.CA)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &apiClient{ep: ep, http: &http.Client{Transport: tr}, namespace: namespace, timeout: timeout}, nil
}

// errNotSent: the request never reached the server (the connection was refused): the operation
// did not happen, and is left out of the history.
var errNotSent = errors.New("not sent")

func (c *apiClient) do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.ep.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.ep.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.ep.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return 0, nil, errNotSent
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return 0, nil, errNotSent
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

type configMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

type objectMeta struct {
	Name            string `json:"name"`
	Namespace       string `json:"namespace,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

type status struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

func (c *apiClient) collection() string { return "/api/v1/namespaces/" + c.namespace + "/configmaps" }

func decodeCM(data []byte) (configMap, int64, error) {
	var cm configMap
	if err := json.Unmarshal(data, &cm); err != nil {
		return cm, 0, err
	}
	rv, err := strconv.ParseInt(cm.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return cm, 0, fmt.Errorf("resourceVersion %q: %v", cm.Metadata.ResourceVersion, err)
	}
	return cm, rv, nil
}

// run makes one operation and returns its output; errNotSent when it never reached the server.
// Any answer the model does not name (a 5xx, a timeout, a broken connection) is unknown.
func (c *apiClient) run(in input) (output, error) {
	var code int
	var data []byte
	var err error
	body := func(rv int64) configMap {
		cm := configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: objectMeta{Name: in.Key}, Data: map[string]string{"v": in.Value}}
		if rv > 0 {
			cm.Metadata.ResourceVersion = strconv.FormatInt(rv, 10)
		}
		return cm
	}
	switch in.Kind {
	case opCreate:
		code, data, err = c.do("POST", c.collection(), body(0))
	case opGet:
		code, data, err = c.do("GET", c.collection()+"/"+in.Key, nil)
	case opUpdate:
		code, data, err = c.do("PUT", c.collection()+"/"+in.Key, body(in.RV))
	case opDelete:
		code, data, err = c.do("DELETE", c.collection()+"/"+in.Key, nil)
	}
	if errors.Is(err, errNotSent) {
		return output{}, err
	}
	if err != nil {
		return output{Outcome: outUnknown}, nil
	}
	switch {
	case code == 200 || code == 201:
		if in.Kind == opDelete {
			return output{Outcome: outOK}, nil
		}
		cm, rv, derr := decodeCM(data)
		if derr != nil {
			return output{}, fmt.Errorf("%v answer: %v", in.Kind, derr)
		}
		return output{Outcome: outOK, Value: cm.Data["v"], RV: rv}, nil
	case code == 404:
		return output{Outcome: outNotFound}, nil
	case code == 409:
		var st status
		_ = json.Unmarshal(data, &st)
		if st.Reason == "AlreadyExists" {
			return output{Outcome: outExists}, nil
		}
		return output{Outcome: outConflict}, nil
	case code == 429 || code >= 500:
		return output{Outcome: outUnknown}, nil
	default:
		return output{}, fmt.Errorf("%v %s: HTTP %d: %s", in.Kind, in.Key, code, truncate(data))
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
