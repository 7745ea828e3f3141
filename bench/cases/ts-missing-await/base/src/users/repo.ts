export interface User {
  id: string;
  displayName: string;
}

export interface UserRepo {
  save(user: User): Promise<void>;
  load(id: string): Promise<User | undefined>;
}
