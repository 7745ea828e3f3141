package com.example.files;

import java.nio.file.Path;

public final class Uploads {
    private final Path root;

    public Uploads(Path root) {
        this.root = root;
    }

    public Path resolve(String name) {
        return root.resolve(name).normalize();
    }
}
