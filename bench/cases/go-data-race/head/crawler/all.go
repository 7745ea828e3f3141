package crawler

import (
	"net/http"
	"sync"
)

// FetchAll fetches every url concurrently; failed fetches are skipped.
func FetchAll(client *http.Client, urls []string) [][]byte {
	var pages [][]byte
	var wg sync.WaitGroup
	for _, url := range urls {
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			body, err := Fetch(client, u)
			if err == nil {
				pages = append(pages, body)
			}
		}(url)
	}
	wg.Wait()
	return pages
}
