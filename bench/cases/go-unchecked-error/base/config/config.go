package config

// Config is the service configuration.
type Config struct {
	ListenAddr string `json:"listen_addr"`
	DBURL      string `json:"db_url"`
}
