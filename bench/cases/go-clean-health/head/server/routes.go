package server

import (
	"encoding/json"
	"net/http"
)

// Version is set at build time with -ldflags.
var Version = "dev"

// Routes registers the service's handlers.
func Routes(mux *http.ServeMux) {
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	})
	mux.HandleFunc("/healthz", health)
}

func health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(map[string]string{"version": Version}); err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
	}
}
