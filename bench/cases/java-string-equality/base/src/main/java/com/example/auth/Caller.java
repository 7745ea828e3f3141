package com.example.auth;

public record Caller(String name, String role) {}
