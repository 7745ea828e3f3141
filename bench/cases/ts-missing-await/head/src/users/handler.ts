import type { User, UserRepo } from "./repo";

export interface Reply {
  status: number;
  body: string;
}

export async function updateProfile(repo: UserRepo, user: User, displayName: string): Promise<Reply> {
  if (displayName.trim().length === 0) {
    return { status: 400, body: "display name is required" };
  }
  const updated = { ...user, displayName: displayName.trim() };
  try {
    repo.save(updated);
  } catch (error) {
    return { status: 500, body: "could not save profile" };
  }
  return { status: 200, body: "saved" };
}
