package config

import (
	"encoding/json"
	"os"
)

// Config is the service configuration.
type Config struct {
	ListenAddr string `json:"listen_addr"`
	DBURL      string `json:"db_url"`
}

// Load reads the configuration file at path.
func Load(path string) (*Config, error) {
	file, err := os.Open(path)
	defer file.Close()
	var cfg Config
	json.NewDecoder(file).Decode(&cfg)
	return &cfg, err
}
