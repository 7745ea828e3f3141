package crawler

import (
	"io"
	"net/http"
)

// Fetch returns the body of url.
func Fetch(client *http.Client, url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
